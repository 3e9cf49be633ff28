/** One line of the results table; `direct`/`ratio` are null where the figure has no direct counterpart. */
export interface Row {
  id: string;
  metric: string;
  direct: number | null;
  tunnel: number;
  ratio: number | null;
  /** Shown instead of the ratio when a difference says more (SSE). */
  ratioText?: string;
  goal: string;
  /** null: no goal for this figure. */
  met: boolean | null;
  /** TCP rows only: the figure through `ssh -L` (null when OpenSSH is missing) and tunnel ÷ ssh. */
  ssh?: number | null;
  sshRatio?: number | null;
}
