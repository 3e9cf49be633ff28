/**
 * The path edge rules match against. A local service treats `/admin`, `/%61dmin`, `//admin`,
 * `/./admin` and `/x/../admin` as one resource (most servers decode and resolve them before they
 * route), so a rule that saw the raw path could be stepped around by spelling it another way.
 * Rules see it in one spelling (RFC 3986 §6.2.2): percent-encoded unreserved characters
 * decoded, the hex of the other escapes in upper case, runs of `/` merged into one, and `.` and
 * `..` segments resolved (§5.2.4). The request forwarded to the local service keeps the path the
 * visitor sent: this is only what the rules look at.
 */
export function normalizeRulePath(path: string): string {
  // Most paths have nothing to normalise: answer them without allocating.
  if (path.indexOf('%') < 0 && path.indexOf('//') < 0 && path.indexOf('/.') < 0) return path;
  const decoded = path.indexOf('%') < 0 ? path : normalizeEscapes(path);
  return decoded.charCodeAt(0) === 47 /* / */ ? resolveSegments(decoded) : decoded;
}

/** `%61` → `a` for the unreserved characters (ALPHA DIGIT - . _ ~), `%2f` → `%2F` for the rest. */
function normalizeEscapes(path: string): string {
  let out = '';
  let from = 0;
  for (let i = path.indexOf('%'); i >= 0 && i + 2 < path.length; i = path.indexOf('%', i + 1)) {
    const high = hexValue(path.charCodeAt(i + 1));
    const low = hexValue(path.charCodeAt(i + 2));
    if (high < 0 || low < 0) continue; // not an escape: left as it is
    const code = high * 16 + low;
    out += path.slice(from, i) + (isUnreserved(code) ? String.fromCharCode(code) : path.slice(i, i + 3).toUpperCase());
    from = i + 3;
    i += 2;
  }
  return from === 0 ? path : out + path.slice(from);
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 65 && code <= 70) return code - 55; // A-F
  if (code >= 97 && code <= 102) return code - 87; // a-f
  return -1;
}

function isUnreserved(code: number): boolean {
  return (
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    (code >= 48 && code <= 57) || // 0-9
    code === 45 || // -
    code === 46 || // .
    code === 95 || // _
    code === 126 // ~
  );
}

/**
 * Merges runs of `/` and resolves `.` and `..` segments of a path that starts with `/`; a `..`
 * never climbs above the root. A path that ended in a segment (`/a/.`, `/a/..`, `/a/`) keeps its
 * trailing `/`.
 */
function resolveSegments(path: string): string {
  const segments = path.slice(1).split('/');
  const out: string[] = [];
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
    else if (i < last) continue;
    if (i === last && (segment === '..' || segment === '.' || segment === '')) out.push('');
  }
  return `/${out.join('/')}`;
}
