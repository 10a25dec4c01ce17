import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { localText, utcText } from './format';

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : 'Something went wrong.';
}

/** An error the user must notice (read out at once by screen readers). */
export function ErrorMessage({ children }: { children: ReactNode }) {
  if (!children) return null;
  return (
    <p className="error" role="alert">
      {children}
    </p>
  );
}

/** A success or progress note (read out politely). */
export function Status({ children }: { children: ReactNode }) {
  return (
    <p className="status" role="status">
      {children}
    </p>
  );
}

interface FieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  required?: boolean;
  hint?: string;
  errors?: string[];
  autoComplete?: string;
  placeholder?: string;
  inputMode?: 'decimal' | 'email' | 'text' | 'url';
}

export function Field({
  label,
  value,
  onChange,
  type = 'text',
  required,
  hint,
  errors,
  autoComplete,
  placeholder,
  inputMode,
}: FieldProps) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : null, errors?.length ? `${id}-error` : null]
    .filter(Boolean)
    .join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required ? <span aria-hidden="true"> *</span> : null}
      </label>
      <input
        id={id}
        type={type}
        value={value}
        required={required}
        autoComplete={autoComplete}
        placeholder={placeholder}
        inputMode={inputMode}
        aria-invalid={errors?.length ? true : undefined}
        aria-describedby={describedBy || undefined}
        onChange={(e) => onChange(e.target.value)}
      />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      <FieldErrors id={`${id}-error`} errors={errors} />
    </div>
  );
}

/** A field's validation messages, under it; the field names `id` in its aria-describedby. */
function FieldErrors({ id, errors }: { id: string; errors?: string[] }) {
  if (!errors?.length) return null;
  return (
    <small id={id} className="field-error">
      {errors.join(' ')}
    </small>
  );
}

interface SelectProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: readonly (string | { value: string; label: string })[];
  errors?: string[];
}

export function Select({ label, value, onChange, options, errors }: SelectProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        aria-invalid={errors?.length ? true : undefined}
        aria-describedby={errors?.length ? `${id}-error` : undefined}
        onChange={(e) => onChange(e.target.value)}
      >
        {options.map((o) => {
          const option = typeof o === 'string' ? { value: o, label: o } : o;
          return (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          );
        })}
      </select>
      <FieldErrors id={`${id}-error`} errors={errors} />
    </div>
  );
}

/** A form's submit button: disabled, and saying so, while the form is being sent. */
export function SubmitButton({
  busy,
  label,
  busyLabel,
}: {
  busy: boolean;
  label: string;
  busyLabel: string;
}) {
  return (
    <button type="submit" disabled={busy}>
      {busy ? busyLabel : label}
    </button>
  );
}

/** A table's column headings (`scope="col"`, so screen readers name the column of each cell). */
export function ColumnHeads({
  columns,
  numeric = [],
}: {
  columns: readonly string[];
  /** Columns of numbers: their heading lines up on the right, like the numbers. */
  numeric?: readonly string[];
}) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col" className={numeric.includes(column) ? 'num' : undefined}>
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Reloads a list (what others changed since it was loaded). */
export function RefreshButton({ onRefresh }: { onRefresh: () => Promise<unknown> }) {
  return (
    <button type="button" onClick={() => void onRefresh()}>
      Refresh
    </button>
  );
}

/**
 * Previous and Next of a keyset-paged list: `next` is the cursor of the next page (null on the last),
 * `page` the number of the page shown (1 + the cursors come through).
 */
export function Pager({
  label,
  page,
  next,
  onNext,
  onPrevious,
}: {
  label: string;
  page: number;
  next: string | null | undefined;
  onNext: (cursor: string) => void;
  onPrevious: () => void;
}) {
  if (page <= 1 && !next) return null;
  return (
    <nav className="pager" aria-label={`Pages of ${label}`}>
      {page > 1 ? (
        <button type="button" onClick={onPrevious}>
          Previous page
        </button>
      ) : null}
      <span className="page-number">Page {page}</span>
      {next ? (
        <button type="button" onClick={() => onNext(next)}>
          Next page
        </button>
      ) : null}
    </nav>
  );
}

/** A date and time in the browser's time zone; hovering shows it in UTC, as the API gives it. */
export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <>—</>;
  return (
    <time dateTime={iso} title={utcText(iso)}>
      {localText(iso)}
    </time>
  );
}

/**
 * A table that scrolls sideways in its own box when the screen is too narrow for it, instead of the
 * page. Only then is the box a tab stop (so keyboard users can scroll it) and a named region.
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const check = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div
      ref={box}
      className="table-scroll"
      tabIndex={scrolls ? 0 : undefined}
      role={scrolls ? 'region' : undefined}
      aria-label={scrolls ? `${label} (scrolls sideways)` : undefined}
    >
      {children}
    </div>
  );
}

/** What an empty list means, and the action that fills it. */
export function Empty({ children, action }: { children: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty">
      <p>{children}</p>
      {action ? <p>{action}</p> : null}
    </div>
  );
}

/** Copies `text`; says so in a live region, since a screen reader user cannot see the clipboard. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('Could not copy: select the text and copy it by hand.');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" className="copied">
        {copied}
      </span>
    </>
  );
}

/** A secret shown once (an API key, a webhook secret): read-only text, a copy button, a warning. */
export function ShownOnce({
  title,
  label,
  value,
  warning,
}: {
  title: string;
  label: string;
  value: string;
  warning: ReactNode;
}) {
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [value]);
  return (
    <section className="shown-once" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} className="secret" readOnly value={value} onFocus={(e) => e.target.select()} />
      </div>
      <CopyButton text={value} label={`Copy ${label.charAt(0).toLowerCase()}${label.slice(1)}`} />
      <p className="warning">
        <strong>Warning:</strong> {warning}
      </p>
    </section>
  );
}
