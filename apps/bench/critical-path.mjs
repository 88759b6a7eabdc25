// Preload for a gateway serving one client (node --import): per call (a POST), the time from its start to its line on
// the server's stdin, the server's round trip, and from the answer read to the first write to a TCP socket; medians of
// the last $CP_LAST calls (2,000) appended to $CP_OUT (/tmp/cp.out) at exit. Used for docs/perf/peers.md ("Where one
// call's time goes"). With $CP_ROWS set, the same moments on the monotonic clock every process on the machine shares
// (µs) go to that file as JSON rows; a client that stamps each call's start and end with process.hrtime joins them call
// by call ("One client, timed across the three processes"): `node apps/bench/critical-path.mjs join ROWS.json CLIENT.json`.
import dc from "node:diagnostics_channel";
import { readFileSync, writeFileSync } from "node:fs";
import net from "node:net";

const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];

if (process.argv[2] === "join") {
  const [gateway, client] = process.argv.slice(3).map((file) => JSON.parse(readFileSync(file, "utf8")));
  const starts = gateway.map((row) => row[0]);
  const parts = { total: [], toStart: [], gateway: [], toStdin: [], server: [], answer: [], afterWrite: [] };
  for (const [start, end] of client) {
    // The gateway's first call that started within this one (binary search on the sorted starts).
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
    const part = { total: end - start, toStart: a - start, gateway: d - a, toStdin: b - a, server: c - b, answer: d - c, afterWrite: end - d };
    for (const [key, value] of Object.entries(part)) parts[key].push(value);
  }
  const m = (key) => median(parts[key])?.toFixed(0);
  console.log(
    `${parts.total.length} calls joined, medians (µs): call ${m("total")} | client -> request start ${m("toStart")} | gateway ${m("gateway")} (to stdin ${m("toStdin")}, server ${m("server")}, answer ${m("answer")}) | socket write -> call done ${m("afterWrite")}`,
  );
} else {
  const now = () => Number(process.hrtime.bigint()) / 1000;
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
  process.on("exit", () => {
    const out = process.env.CP_OUT ?? "/tmp/cp.out";
    if (process.env.CP_ROWS) writeFileSync(process.env.CP_ROWS, JSON.stringify(rows.slice(-3000)));
    const tail = rows.slice(-Number(process.env.CP_LAST ?? 2000));
    // Nothing timed (no request reached a stdio server, or its answer went out on another request's stream): say so.
    if (tail.length === 0) return writeFileSync(out, "no call timed\n", { flag: "a" });
    const at = (i, j) => median(tail.map((r) => r[j] - r[i])).toFixed(0);
    writeFileSync(out, `${tail.length} calls: request->stdin ${at(0, 1)} µs, server ${at(1, 2)} µs, answer->socket ${at(2, 3)} µs (medians)\n`, {
      flag: "a",
    });
  });
}
