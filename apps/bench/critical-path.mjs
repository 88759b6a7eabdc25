// Preload for a gateway serving one client (node --import): per call, the time from a request's start to its line on the
// server's stdin, the server's round trip, and from the answer read to the first write to a TCP socket; medians of the
// last $CP_LAST calls (2,000) appended to $CP_OUT (/tmp/cp.out) at exit. Used for docs/perf/peers.md ("Where one call's time goes").
import dc from "node:diagnostics_channel";
import net from "node:net";
import { writeFileSync } from "node:fs";
const now = () => Number(process.hrtime.bigint()) / 1000;
let A = 0,
  B = 0,
  C = 0;
const rows = [];
dc.subscribe("http.server.request.start", () => {
  A = now();
  B = 0;
  C = 0;
});
const isPipe = (s) => s._handle?.constructor?.name === "Pipe";
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (...args) {
  if (A) {
    if (isPipe(this)) {
      if (!B) B = now();
    } else if (C) {
      rows.push([B - A, C - B, now() - C]);
      A = 0;
      B = 0;
      C = 0;
    }
  }
  return write.apply(this, args);
};
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (ev, ...args) {
  if (ev === "data" && A && B && !C && isPipe(this)) C = now();
  return emit.call(this, ev, ...args);
};
process.on("exit", () => {
  const tail = rows.slice(-Number(process.env.CP_LAST ?? 2000));
  // Nothing timed (no request reached a stdio server, or its answer went out on another request's stream): say so.
  if (tail.length === 0) return writeFileSync(process.env.CP_OUT ?? "/tmp/cp.out", "no call timed\n", { flag: "a" });
  const med = (i) => tail.map((r) => r[i]).sort((a, b) => a - b)[Math.floor(tail.length / 2)];
  writeFileSync(
    process.env.CP_OUT ?? "/tmp/cp.out",
    `${tail.length} calls: request->stdin ${med(0).toFixed(0)} µs, server ${med(1).toFixed(0)} µs, answer->socket ${med(2).toFixed(0)} µs (medians)\n`,
    { flag: "a" },
  );
});
