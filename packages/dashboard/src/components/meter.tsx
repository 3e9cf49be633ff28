import type { JSX } from 'preact';

interface MeterProps {
  label: string;
  value: number;
  max: number;
  /** The amounts as people read them, e.g. "1.2 GB of 50 GB". */
  text: string;
}

/**
 * One plan limit drawn as a bar. The fill's width is set through the CSSOM (Preact's style
 * object), which the Content-Security-Policy allows, unlike a style attribute in markup.
 */
export function Meter({ label, value, max, text }: MeterProps): JSX.Element {
  const ratio = max > 0 ? Math.min(1, value / max) : 0;
  const level = ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : 'ok';
  return (
    <div class="meter">
      <div class="meter-label">
        <span>{label}</span>
        <span class="muted">{text}</span>
      </div>
      <div
        class="meter-track"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
        aria-valuetext={text}
      >
        <div class={`meter-fill ${level}`} style={{ width: `${(ratio * 100).toFixed(1)}%` }} />
      </div>
    </div>
  );
}
