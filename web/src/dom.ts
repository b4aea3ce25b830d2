// A few DOM helpers for the web view: elements built from code (no innerHTML, so no text from
// the server is ever parsed as markup).
type Attrs = Record<string, string | number | boolean | null | undefined | ((ev: Event) => void)>;
type Child = Node | string | number | null | undefined | false;

/** `<tag attrs...>children</tag>`; `on<event>` attributes become listeners, `class` the class name. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: HTMLElement, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces the element's children. */
export function fill(el: HTMLElement, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A table with a header row and body rows. */
export function table(headers: string[], rows: HTMLTableRowElement[], attrs: Attrs = {}): HTMLTableElement {
  return h('table', attrs, h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', {}, t)))), h('tbody', {}, ...rows));
}

/** Runs `fn` once, `ms` after the last of a burst of calls. */
export function debounce(fn: () => void, ms: number): { (): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
  run.cancel = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return run;
}

/** The message of anything thrown, for a status line. */
export function errorText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}
