let dateSecond = -1;
let dateText = '';

/** The current time as an HTTP date, formatted once per second (Node's ServerResponse adds one too). */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
