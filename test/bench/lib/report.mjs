/**
 * Figures of a cell (medians over its runs, differences taken pair by pair so that load shared by a baseline run and
 * the casebridge run after it cancels out), the issue's targets with met / MISSED, and the markdown.
 */
import { median, round } from './common.mjs';

/** Median over pairs of f(baseline run, casebridge run). A shared baseline pairs with every casebridge run. */
function paired(cell, f) {
  return median(cell.casebridge.map((c, i) => f(cell.baseline[i] ?? cell.baseline[0], c)));
}

export function summarizeCell(cell) {
  const cb = cell.casebridge;
  const failures = cell.variant === 'failing' ? Math.floor(cell.size / 10) : 0;
  const requests = median(cb.map((r) => r.requests));
  return {
    runs: cb.length,
    ratios: cb.map((c, i) => round(c.wallMs / (cell.baseline[i] ?? cell.baseline[0]).wallMs, 2)),
    wallBaseS: round(median(cell.baseline.map((r) => r.wallMs)) / 1000, 2),
    wallCbS: round(median(cb.map((r) => r.wallMs)) / 1000, 2),
    ratio: round(
      paired(cell, (b, c) => c.wallMs / b.wallMs),
      3,
    ),
    drainBaseMs: round(median(cell.baseline.map((r) => r.drainMs))),
    drainCbMs: round(median(cb.map((r) => r.drainMs))),
    /** Parent-measured: last test end to exit, casebridge minus baseline, pair by pair. */
    drainAddedMs: round(paired(cell, (b, c) => c.drainMs - b.drainMs)),
    /** In-process: time the reporters' end hooks took, casebridge minus baseline (JUnit alone). */
    onEndAddedMs: round(paired(cell, (b, c) => c.onEndMs - b.onEndMs)),
    requests,
    perTest: round(requests / cell.size, 3),
    failures,
    failedRequests: Math.max(...cb.map((r) => r.failedRequests)),
    cpuBaseMs: round(median(cell.baseline.map((r) => r.cpuMs)), 0),
    cpuCbMs: round(median(cb.map((r) => r.cpuMs)), 0),
    /** Main-process CPU added by casebridge, per pair. */
    cpuAddedMs: round(
      paired(cell, (b, c) => c.cpuMs - b.cpuMs),
      0,
    ),
    emulatorCpuMs: round(median(cb.map((r) => r.emulatorCpuMs)), 0),
    rssBaseMb: round(median(cell.baseline.map((r) => r.maxRssMb))),
    rssCbMb: round(median(cb.map((r) => r.maxRssMb))),
    rssAddedMb: round(paired(cell, (b, c) => c.maxRssMb - b.maxRssMb)),
    // BENCH_LIVE_HEAP_MS: the heap left after a forced full GC, at its largest (null without it).
    liveBaseMb: round(median(cell.baseline.map((r) => r.maxLiveMb ?? Number.NaN))),
    liveCbMb: round(median(cb.map((r) => r.maxLiveMb ?? Number.NaN))),
    liveAddedMb: round(paired(cell, (b, c) => (c.maxLiveMb ?? Number.NaN) - (b.maxLiveMb ?? Number.NaN))),
    delivered: Math.min(...cb.map((r) => r.delivered ?? 0)),
    byOp: cb[cb.length - 1]?.byOp ?? {},
    tail: cb[cb.length - 1]?.tail ?? [],
    load: cell.load ? round(median(cell.load), 2) : null,
  };
}

export function summarizeFiles(s) {
  const b = s.baseline[0];
  const c = s.casebridge[0];
  const uploadedMb = (c.uploads?.count ?? 0) * s.mb;
  return {
    uploads: c.uploads?.count ?? 0,
    uploadedMb,
    spanS: c.uploads ? round(c.uploads.spanMs / 1000, 2) : null,
    mbPerS: c.uploads ? round(uploadedMb / (c.uploads.spanMs / 1000)) : null,
    rssBaseMb: round(b.maxRssMb),
    rssCbMb: round(c.maxRssMb),
    rssAddedMb: round(c.maxRssMb - b.maxRssMb),
    onEndAddedMs: round(c.onEndMs - b.onEndMs),
    wallBaseS: round(b.wallMs / 1000, 2),
    wallCbS: round(c.wallMs / 1000, 2),
    requests: c.requests,
    delivered: c.delivered,
  };
}

/** Runners that call their reporters' end hooks concurrently, so the in-process end-hook figure says nothing. */
const CONCURRENT_END_HOOKS = new Set(['vitest']);

const find = (results, q) =>
  results.cells.find((c) => Object.entries(q).every(([k, v]) => c[k] === v) && c.summary)?.summary;

/** The issue's targets, per runner that has cells: figure, verdict, and the breakdown that explains it. */
export function targets(results, settings) {
  const out = [];
  const verdict = (ok) => (ok === null ? 'not measured' : ok ? 'met' : 'MISSED');
  const ops = (s) =>
    Object.entries(s.byOp)
      .map(([op, n]) => `${op} ×${n}`)
      .join(', ');
  const runners = [...new Set(results.cells.map((c) => c.runner))];
  for (const runner of runners) {
    const q = (size, variant, latency) => find(results, { runner, size, variant, mode: 'cycle', latency });
    for (const size of [1000, 10_000]) {
      const cells = settings.latencies.map((l) => [l, q(size, 'passing', l)]).filter(([, s]) => s);
      if (cells.length === 0) continue;
      const worst = Math.max(...cells.map(([, s]) => s.requests));
      out.push({
        runner,
        target: `cycle, all passing, ${size.toLocaleString('en')} tests: ≤ 8 requests in total`,
        figure: cells.map(([l, s]) => `${s.requests} at ${l} ms`).join(', '),
        verdict: verdict(worst <= 8),
        why: (() => {
          const w = cells.find(([, s]) => s.requests === worst)[1];
          const bulks = w.byOp['runs.bulkStatusUpdate'] ?? 0;
          return `${ops(w)}. ${bulks} bulk update(s) in a ${w.wallCbS} s run: status-only results go when the last planned test reports (runners that plan their tests), else after 30 s, then 60 s, 120 s, ... (BULK_WAIT_MS, doubling), at most 10,000 per call (BULK_MAX), after 6 calls to prepare the cycle`;
        })(),
      });
    }
    for (const size of [1000, 10_000]) {
      const s = q(size, 'passing', 20);
      if (!s) continue;
      out.push({
        runner,
        target: `cycle, all passing, ${size.toLocaleString('en')} tests, 20 ms: ≤ 30 ms added from the last test's end to exit`,
        figure: `${s.onEndAddedMs} ms in the end hook (median of ${s.runs}); parent-measured drain ${s.drainCbMs} ms vs ${s.drainBaseMs} ms baseline (${s.drainAddedMs >= 0 ? '+' : ''}${s.drainAddedMs} ms)`,
        // Vitest calls its reporters' end hooks at once: only the parent-measured drain difference is meaningful.
        verdict: verdict((CONCURRENT_END_HOOKS.has(runner) ? s.drainAddedMs : s.onEndAddedMs) <= 30),
        why: `requests the end waited for (time at the service, latency included): ${s.tail.map((t) => `${t.op} ${t.ms} ms`).join(', ') || 'none'}; ${s.tail.some((t) => t.op !== 'runs.bulkStatusUpdate') ? 'the cycle was still being prepared when the last test ended (the suite ran faster than the calls that prepare it)' : 'the rest is CPU in the engine’s end()'}`,
      });
    }
    const oc = settings.overheadCell;
    const o = find(results, { runner, ...oc });
    if (o) {
      out.push({
        runner,
        target: `wall-time overhead ≤ 3% (${oc.size.toLocaleString('en')} passing, cycle, ${oc.latency} ms, median of ${o.runs} interleaved pairs)`,
        figure: `${round((o.ratio - 1) * 100)}% (ratio ${o.ratio}; ${o.wallCbS} s vs ${o.wallBaseS} s)`,
        verdict: verdict(o.ratio <= 1.03),
        why: `load average ${o.load} on ${results.env.cores} cores; pair ratios ${o.ratios.join(', ')}${o.cpuAddedMs !== null ? `; main-process CPU +${o.cpuAddedMs} ms (${o.cpuBaseMs} → ${o.cpuCbMs} ms); emulator CPU on the same cores ${o.emulatorCpuMs} ms` : ''}`,
      });
    }
    for (const [size, limit] of [
      [1000, 10],
      [10_000, 30],
    ]) {
      const s = q(size, 'passing', 20);
      if (!s) continue;
      out.push({
        runner,
        target: `main-process memory ≤ +${limit} MB at ${size.toLocaleString('en')} tests (cycle, 20 ms)`,
        figure: `${signed(s.rssAddedMb)} MB (peak RSS ${s.rssCbMb} MB vs ${s.rssBaseMb} MB, ${s.runs > 1 ? `median of ${s.runs} pairs` : 'one pair; the baseline’s own peak varies by tens of MB between runs'})`,
        verdict: verdict(s.rssAddedMb <= limit),
        why: [
          results.importCost?.[runner]
            ? `importing ${results.importCost[runner].package} alone: +${results.importCost[runner].rssMb} MB RSS (+${results.importCost[runner].heapMb} MB heap)`
            : '',
          s.liveAddedMb !== null
            ? `heap left after a full GC, at its largest (BENCH_LIVE_HEAP_MS): ${signed(s.liveAddedMb)} MB (${s.liveCbMb} vs ${s.liveBaseMb} MB)`
            : '',
        ]
          .filter(Boolean)
          .join('; '),
      });
    }
    const growth = settings.sizes
      .map((size) => [size, q(size, 'passing', 20), q(size, 'failing', 20)])
      .filter(([, p, f]) => p && f)
      .map(([size, p, f]) => ({
        size,
        extra: f.requests - p.requests,
        failures: f.failures,
        per: (f.requests - p.requests) / f.failures,
      }));
    if (growth.length > 0) {
      const pers = growth.map((g) => g.per);
      out.push({
        runner,
        target: '10% failing with screenshots (cycle, 20 ms): requests grow only with the failures',
        figure: growth
          .map(
            (g) =>
              `${g.size.toLocaleString('en')} tests: +${g.extra} for ${g.failures} failures (${round(g.per, 2)}/failure)`,
          )
          .join('; '),
        verdict: verdict(growth.length > 1 ? Math.max(...pers) - Math.min(...pers) <= 0.5 : null),
        why:
          growth.length > 1
            ? 'requests per failure stay the same whatever the number of passing tests'
            : 'needs two sizes to compare',
      });
    }
    const files = results.files.filter((f) => f.runner === runner);
    const small = files.find((f) => f.mb === Math.min(...files.map((x) => x.mb)))?.summary;
    const big = files.find((f) => f.mb === Math.max(...files.map((x) => x.mb)))?.summary;
    if (small && big && small !== big) {
      const mbs = files.map((f) => f.mb);
      out.push({
        runner,
        target: `attachment memory independent of file size (${settings.fileCount} files of ${Math.min(...mbs)} vs ${Math.max(...mbs)} MB)`,
        figure: `RSS growth with ${Math.max(...mbs)} MB files +${big.rssAddedMb} MB, with ${Math.min(...mbs)} MB files +${small.rssAddedMb} MB; uploads at ${big.mbPerS} MB/s`,
        verdict: verdict(big.rssAddedMb - small.rssAddedMb <= 10 && big.uploads === settings.fileCount),
        why: `uploads: ${big.uploads}/${settings.fileCount}; a buffered file would add ${Math.max(...mbs)} MB per upload in flight`,
      });
    }
  }
  return out;
}

const cellRow = (c) => {
  const s = c.summary;
  return `| ${c.runner} | ${c.size.toLocaleString('en')} | ${c.variant} | ${c.mode} | ${c.latency} | ${s.runs}${c.sharedBaseline ? '*' : ''} | ${s.wallBaseS} | ${s.wallCbS} | ${s.ratio} | ${s.drainBaseMs} | ${s.drainCbMs} | ${s.onEndAddedMs} | ${s.cpuAddedMs ?? ''} | ${s.emulatorCpuMs ?? ''} | ${s.requests} | ${s.perTest} | ${s.rssBaseMb} | ${s.rssCbMb} | ${signed(s.rssAddedMb)} | ${s.delivered}/${c.size} | ${s.load} |`;
};

/** What changed in the repository while the run went on (other people commit and rebuild meanwhile). */
function changed(v) {
  const c = v.changedDuringRun;
  if (!c) return '';
  if (c.rebuilt.length > 0) {
    return ` **Rebuilt during the run: ${c.rebuilt.join(', ')}; cells before and after measured different builds.**`;
  }
  return ` The commit moved to ${c.commit} during the run; no package was rebuilt, so every cell measured the same builds.`;
}

const signed = (n) => (n === null ? '' : `${n >= 0 ? '+' : ''}${n}`);

export function render(json, settings) {
  const e = json.env;
  const lines = [
    '# Reporter benchmark',
    '',
    `${json.at} · Node ${e.node} · ${e.platform} · ${e.cores} × ${e.cpu} · load average at start ${e.loadAtStart.join(' ')}${e.loadAtEnd ? `, at end ${e.loadAtEnd.join(' ')}` : ''}${json.durationSeconds ? ` · ${Math.round(json.durationSeconds / 60)} min` : ''}`,
    '',
    `Measured: commit ${json.versions.commit}; builds ${Object.entries(json.versions.builds)
      .filter(([, t]) => t)
      .map(([k, t]) => `${k} ${t}`)
      .join(', ')}.${changed(json.versions)}`,
    '',
    `Settings: sizes ${settings.sizes.join(', ')}; latencies ${settings.latencies.join(', ')} ms; modes ${settings.modes.join(', ')}; ${settings.reps} interleaved pairs in the overhead cell${settings.quick ? '; QUICK mode' : ''}. Emulator in process, in memory; each run starts from the seed (one test plan, one case per test).`,
    '',
    '## Targets',
    '',
    '| runner | target | figure | verdict | breakdown |',
    '|---|---|---|:---:|---|',
    ...json.targets.map((t) => `| ${t.runner} | ${t.target} | ${t.figure} | ${t.verdict} | ${t.why} |`),
    '',
    '## Runs',
    '',
    'Wall = spawn to exit of the runner, seen from the parent. Ratio = casebridge / baseline wall time (median of pairs). Drain = the last test’s end (timing probe in the runner) to the process exit (parent). +end hook = time the reporters’ end hooks took with casebridge minus JUnit alone (in-process, median of pairs). +CPU = CPU time (user + system) of the runner’s main process, casebridge minus baseline (median of pairs). Emulator CPU = CPU the in-process emulator used during the casebridge run, on the same two cores (a real service would not load them). RSS = peak RSS of the runner’s main process at exit. Delivered = runs with a result in the emulator. `*` = one baseline run shared by the cells of that size and variant. Load = 1-minute load average around the runs.',
    '',
    '| runner | tests | variant | mode | latency ms | runs | wall base s | wall cb s | ratio | drain base ms | drain cb ms | +end hook ms | +CPU ms | emulator CPU ms | requests | req/test | RSS base MB | RSS cb MB | +RSS MB | delivered | load |',
    '|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...json.cells.map(cellRow),
    '',
  ];
  if (json.files.length > 0) {
    lines.push(
      '## Attachments',
      '',
      `${settings.fileCount} passing tests, each attaching one file by path (random bytes, image/png; casebridge uploads every screenshot: \`attachments.screenshots: 'all'\`), cycle mode, no added latency. Throughput = bytes uploaded / (first upload’s start to last upload’s end, emulator log).`,
      '',
      '| runner | file size | uploads | MB uploaded | upload span s | MB/s | RSS base MB | RSS cb MB | +RSS MB | +end hook ms | wall base s | wall cb s |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...json.files.map((f) => {
        const s = f.summary;
        return `| ${f.runner} | ${f.mb} MB | ${s.uploads} | ${s.uploadedMb} | ${s.spanS} | ${s.mbPerS} | ${s.rssBaseMb} | ${s.rssCbMb} | ${signed(s.rssAddedMb)} | ${s.onEndAddedMs} | ${s.wallBaseS} | ${s.wallCbS} |`;
      }),
      '',
    );
  }
  if (json.skipped.length > 0) {
    lines.push('## Not run', '', ...json.skipped.map((s) => `- ${s.runner}: ${s.reason}`), '');
  }
  return lines.join('\n');
}
