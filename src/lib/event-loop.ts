/**
 * Waits for a turn of the event loop. Long work that only awaits other in-process work (zlib's
 * callbacks, R2 calls answered by a binding) never lets the runtime look at its sockets, so every
 * other request of the isolate waits until that work ends; a timer makes it look in between.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
