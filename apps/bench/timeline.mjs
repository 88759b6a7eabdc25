// Preload for a gateway serving one client (node --import): per POST, on the monotonic clock every process on the machine
// shares (µs), its start, its line's write to the server's stdin, the answer's arrival on stdout and the first write to
// a TCP socket after it; the last $TL_LAST (3,000) rows go to $TL_OUT (/tmp/tl-gw.json) at exit. A client that stamps
// each call's start and end with process.hrtime joins them call by call (docs/perf/peers.md, "One client, timed
// across the three processes"): `node apps/bench/timeline.mjs join GATEWAY.json CLIENT.json`.
import dc from "node:diagnostics_channel";
import { readFileSync, writeFileSync } from "node:fs";
import net from "node:net";

const now = () => Number(process.hrtime.bigint()) / 1000;

if (process.argv[2] === "join") {
  const [gateway, client] = process.argv.slice(3).map((file) => JSON.parse(readFileSync(file, "utf8")));
  const starts = gateway.map((row) => row[0]);
  const parts = { total: [], toStart: [], gateway: [], toStdin: [], server: [], answer: [], afterWrite: [] };
  for (const [start, end] of client) {
    // The gateway's first POST that started within this call (binary search on the sorted starts).
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < start) lo = mid + 1;
      else hi = mid;
    }
    const row = gateway[lo];
    if (!row || row[0] > end || row[3] > end) continue;
    const [a, b, c, d] = row;
    Object.entries({ total: end - start, toStart: a - start, gateway: d - a, toStdin: b - a, server: c - b, answer: d - c, afterWrite: end - d }).forEach(
      ([key, value]) => parts[key].push(value),
    );
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1]?.toFixed(0);
  console.log(
    `${parts.total.length} calls joined, medians (µs): call ${median(parts.total)} | client -> request start ${median(parts.toStart)} | gateway ${median(parts.gateway)} (to stdin ${median(parts.toStdin)}, server ${median(parts.server)}, answer ${median(parts.answer)}) | socket write -> call done ${median(parts.afterWrite)}`,
  );
} else {
  let a = 0;
  let b = 0;
  let c = 0;
  const rows = [];
  dc.subscribe("http.server.request.start", ({ request }) => {
    if (request.method !== "POST") return;
    a = now();
    b = 0;
    c = 0;
  });
  const isPipe = (socket) => socket._handle?.constructor?.name === "Pipe";
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (...args) {
    if (a) {
      if (isPipe(this)) b ||= now();
      else if (c) {
        rows.push([a, b, c, now()]);
        a = 0;
      }
    }
    return write.apply(this, args);
  };
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (event, ...args) {
    if (event === "data" && a && b && !c && isPipe(this)) c = now();
    return emit.call(this, event, ...args);
  };
  process.on("exit", () => writeFileSync(process.env.TL_OUT ?? "/tmp/tl-gw.json", JSON.stringify(rows.slice(-Number(process.env.TL_LAST ?? 3000)))));
}
