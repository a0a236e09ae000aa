/**
 * Frees a buffer's memory at once instead of at the next garbage collection.
 *
 * An export moves gigabytes through short-lived buffers: each dump piece, gzip's output pieces.
 * V8 frees a buffer's memory only when it collects the buffer object, and starts a collection for
 * such memory only after about 64 MB of it has piled up, so an export's isolate carried tens of
 * megabytes of dead buffers. Detaching a buffer (`transfer(0)`) hands its memory back now.
 *
 * Only for a buffer the caller alone holds and is done with: every view of it reads as empty
 * afterwards.
 */
export function release(buffer: ArrayBufferLike): void {
  const detachable = buffer as ArrayBufferLike & { transfer?: (length: number) => ArrayBuffer; detached?: boolean };
  if (typeof detachable.transfer === "function" && !detachable.detached) detachable.transfer(0);
}

/** Whether `view` spans its whole buffer (a piece that owns its buffer, not a window into a larger one). */
export function ownsBuffer(view: ArrayBufferView): boolean {
  return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
}
