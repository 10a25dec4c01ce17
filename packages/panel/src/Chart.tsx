import { useEffect, useId, useRef, useState } from 'react';
import { AxisBottom, AxisLeft } from '@visx/axis';
import { Group } from '@visx/group';
import { PatternLines } from '@visx/pattern';
import { scaleBand, scaleLinear } from '@visx/scale';
import { Bar } from '@visx/shape';
import { labelStep, niceMax } from './chart';

/**
 * Bar charts of the Home page, drawn as SVG with visx (React components, no script or style of their
 * own, so the panel's strict Content-Security-Policy holds). Colour is never the only cue: a second
 * series is hatched, the legend shows each swatch, bars carry their value when it fits and a <title>
 * on hover, and the page gives the same numbers as a table.
 */
export interface ChartSeries {
  key: string;
  label: string;
  values: number[];
  /** Solid or hatched: told apart by pattern, not by colour alone. */
  fill: 'solid' | 'hatched';
  format: (value: number) => string;
}

const COLOURS = { solid: '#0b4fb3', hatched: '#1f6f43' } as const;
const HEIGHT = 240;
const MARGIN = { top: 22, right: 8, bottom: 30, left: 76 };

function useWidth<T extends HTMLElement>(fallback: number) {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const update = () => setWidth(Math.max(200, Math.floor(el.clientWidth)));
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

export function BarChart({
  title,
  description,
  labels,
  fullLabels,
  series,
  axisFormat,
}: {
  title: string;
  description: string;
  /** Short axis label of each bucket ("14h", "23/11"). */
  labels: string[];
  /** Long label of each bucket, for the hover titles. */
  fullLabels: string[];
  series: ChartSeries[];
  axisFormat: (value: number) => string;
}) {
  const { ref, width } = useWidth<HTMLDivElement>(640);
  const id = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  const innerWidth = width - MARGIN.left - MARGIN.right;
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const indexes = labels.map((_, i) => String(i));
  const x = scaleBand<string>({ domain: indexes, range: [0, innerWidth], padding: 0.2 });
  const inner = scaleBand<string>({
    domain: series.map((s) => s.key),
    range: [0, x.bandwidth()],
    padding: series.length > 1 ? 0.08 : 0,
  });
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const y = scaleLinear<number>({ domain: [0, top], range: [innerHeight, 0] });
  const step = labelStep(labels.length, innerWidth);
  const barWidth = inner.bandwidth();

  return (
    <div className="chart" ref={ref}>
      {series.length > 1 ? (
        <ul className="legend">
          {series.map((s) => (
            <li key={s.key}>
              <svg width="18" height="14" aria-hidden="true" focusable="false">
                <Swatch id={`${id}-legend-${s.key}`} fill={s.fill} />
              </svg>
              {s.label}
            </li>
          ))}
        </ul>
      ) : null}
      <svg
        width={width}
        height={HEIGHT}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        focusable="false"
      >
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{description}</desc>
        <defs>
          <PatternLines
            id={`${id}-hatched`}
            height={6}
            width={6}
            stroke={COLOURS.hatched}
            strokeWidth={2}
            orientation={['diagonal']}
            background="#ffffff"
          />
        </defs>
        <Group left={MARGIN.left} top={MARGIN.top}>
          {y.ticks(4).map((t) => (
            <line key={t} x1={0} x2={innerWidth} y1={y(t)} y2={y(t)} stroke="#d7dce5" />
          ))}
          {labels.map((_, i) =>
            series.map((s) => {
              const value = s.values[i] ?? 0;
              const bx = (x(String(i)) ?? 0) + (inner(s.key) ?? 0);
              const by = y(value);
              const h = innerHeight - by;
              const text = s.format(value);
              // A value label only where it fits over its bar; the table below has them all.
              const showLabel = value > 0 && barWidth >= text.length * 6.2;
              return (
                <g key={`${s.key}-${i}`}>
                  <Bar
                    x={bx}
                    y={by}
                    width={barWidth}
                    height={Math.max(0, h)}
                    fill={s.fill === 'solid' ? COLOURS.solid : `url(#${id}-hatched)`}
                    stroke={s.fill === 'solid' ? COLOURS.solid : COLOURS.hatched}
                    strokeWidth={1}
                  >
                    <title>{`${fullLabels[i] ?? labels[i]}: ${s.label} ${text}`}</title>
                  </Bar>
                  {showLabel ? (
                    <text
                      x={bx + barWidth / 2}
                      y={by - 4}
                      textAnchor="middle"
                      fontSize={11}
                      fill="#1a1a1a"
                      aria-hidden="true"
                    >
                      {text}
                    </text>
                  ) : null}
                </g>
              );
            }),
          )}
          <AxisLeft
            scale={y}
            numTicks={4}
            tickFormat={(v) => axisFormat(Number(v))}
            stroke="#6b7280"
            tickStroke="#6b7280"
            tickLabelProps={{ fill: '#1a1a1a', fontSize: 11, textAnchor: 'end', dx: -4, dy: '0.33em' }}
          />
          <AxisBottom
            top={innerHeight}
            scale={x}
            tickValues={indexes.filter((_, i) => i % step === 0)}
            tickFormat={(v) => labels[Number(v)] ?? ''}
            stroke="#6b7280"
            tickStroke="#6b7280"
            tickLabelProps={{ fill: '#1a1a1a', fontSize: 11, textAnchor: 'middle' }}
          />
        </Group>
      </svg>
    </div>
  );
}

/** The legend's sample of a series' fill. */
function Swatch({ id, fill }: { id: string; fill: 'solid' | 'hatched' }) {
  if (fill === 'solid') return <rect x="1" y="1" width="16" height="12" fill={COLOURS.solid} />;
  return (
    <>
      <defs>
        <PatternLines
          id={id}
          height={6}
          width={6}
          stroke={COLOURS.hatched}
          strokeWidth={2}
          orientation={['diagonal']}
          background="#ffffff"
        />
      </defs>
      <rect x="1" y="1" width="16" height="12" fill={`url(#${id})`} stroke={COLOURS.hatched} />
    </>
  );
}

/** One bar split into parts (paid, expired, refunded…), each with its own pattern, labelled beside. */
export interface StackPart {
  key: string;
  label: string;
  value: number;
  pattern: 'solid' | 'hatched' | 'dotted' | 'plain';
}

const STACK_COLOURS: Record<StackPart['pattern'], string> = {
  solid: '#0b4fb3',
  hatched: '#8a5a00',
  dotted: '#a4001d',
  plain: '#9ca3af',
};

export function StackBar({ parts, label }: { parts: StackPart[]; label: string }) {
  const id = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  const { ref, width } = useWidth<HTMLDivElement>(600);
  const height = 28;
  const total = parts.reduce((sum, p) => sum + p.value, 0);
  let offset = 0;
  return (
    <div className="stack" ref={ref}>
      <svg width={width} height={height} role="img" aria-label={label} focusable="false">
        <defs>
          <StackPatterns id={id} />
        </defs>
        <rect x="0" y="0" width={width} height={height} fill="#f1f4f9" stroke="#c9d2e0" />
        {total > 0
          ? parts.map((p) => {
              const w = (p.value / total) * width;
              const x = offset;
              offset += w;
              return w > 0 ? (
                <rect
                  key={p.key}
                  x={x}
                  y="0"
                  width={w}
                  height={height}
                  fill={fillOf(id, p.pattern)}
                  stroke="#ffffff"
                  strokeWidth="1"
                >
                  <title>{`${p.label}: ${p.value}`}</title>
                </rect>
              ) : null;
            })
          : null}
      </svg>
    </div>
  );
}

/** The legend sample of a StackBar part. */
export function StackSwatch({ pattern }: { pattern: StackPart['pattern'] }) {
  const id = useId().replace(/[^a-zA-Z0-9_-]/g, '');
  return (
    <svg width="18" height="14" aria-hidden="true" focusable="false" className="swatch">
      <defs>
        <StackPatterns id={id} />
      </defs>
      <rect x="1" y="1" width="16" height="12" fill={fillOf(id, pattern)} stroke={STACK_COLOURS[pattern]} />
    </svg>
  );
}

const fillOf = (id: string, pattern: StackPart['pattern']) =>
  pattern === 'solid' || pattern === 'plain' ? STACK_COLOURS[pattern] : `url(#${id}-${pattern})`;

function StackPatterns({ id }: { id: string }) {
  return (
    <>
      <PatternLines
        id={`${id}-hatched`}
        height={4}
        width={4}
        stroke={STACK_COLOURS.hatched}
        strokeWidth={1.5}
        orientation={['diagonal']}
        background="#ffffff"
      />
      <pattern id={`${id}-dotted`} width="4" height="4" patternUnits="userSpaceOnUse">
        <rect width="4" height="4" fill="#ffffff" />
        <circle cx="2" cy="2" r="1.3" fill={STACK_COLOURS.dotted} />
      </pattern>
    </>
  );
}
