/**
 * The body of one export-jobs queue message: one per accepted export, then one per checkpoint of
 * its job (the next invocation). Every message of an export goes on from its latest checkpoint.
 */
export interface ExportJobMessage {
  exportId: string;
  databaseId: string;
}
