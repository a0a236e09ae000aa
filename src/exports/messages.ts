/** The body of one export-jobs queue message: one per accepted export. */
export interface ExportJobMessage {
  exportId: string;
  databaseId: string;
}
