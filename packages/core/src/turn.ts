/**
 * Work left for the end of this turn of the event loop (its check phase, as `setImmediate`), in two rounds:
 * first `"downstream"` (the pool's batched writes to its servers), then `"client"` (what tells a client its
 * message was taken, such as a legacy SSE post's 202). A message's downstream write thus leaves before the
 * acknowledgement that would wake its client, and the turn's writes of every kind share one immediate.
 * The queue is this copy of `@codemux/core`'s: packages that load two installed copies get the order within each
 * (only the timing of a 202 is at stake).
 */
export type TurnRound = "downstream" | "client";

let downstream: Array<() => void> = [];
let client: Array<() => void> = [];
let scheduled = false;

/** Runs `work` at the end of this turn, in its round; work added while the turn's work runs waits for the next turn. */
export function atTurnEnd(work: () => void, round: TurnRound = "downstream"): void {
  (round === "downstream" ? downstream : client).push(work);
  if (!scheduled) {
    scheduled = true;
    setImmediate(runTurn);
  }
}

function runTurn(): void {
  const rounds = [downstream, client];
  downstream = [];
  client = [];
  scheduled = false;
  let failure: { error: unknown } | undefined;
  for (const round of rounds) {
    for (const work of round) {
      try {
        work();
      } catch (error) {
        // The rest of the turn's work still runs; the first error is then thrown as a lone immediate would throw it.
        failure ??= { error };
      }
    }
  }
  if (failure) throw failure.error;
}
