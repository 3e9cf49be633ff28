/** How often the UI asks whether the server is back, after losing it. */
const RETRY_MS = 1000;

type Listener = (online: boolean) => void;

/**
 * Whether the server answers. Any failed request marks it lost; from then on `/healthz` is
 * polled until it answers, and listeners hear `true` again so pages reload their data. Used
 * to survive a server restart without a reload of the page.
 */
class Connection {
  online = true;
  private readonly listeners = new Set<Listener>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A request failed at the network level. */
  lost(): void {
    if (!this.online) return;
    this.online = false;
    this.emit();
    this.probe();
  }

  /** A request got an answer. */
  reached(): void {
    if (this.online) return;
    this.online = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.emit();
  }

  private probe(): void {
    this.timer = setTimeout(() => {
      fetch('/healthz', { cache: 'no-store' }).then(
        (response) => (response.ok ? this.reached() : this.probe()),
        () => this.probe(),
      );
    }, RETRY_MS);
  }

  private emit(): void {
    for (const listener of this.listeners) listener(this.online);
  }
}

export const connection = new Connection();
