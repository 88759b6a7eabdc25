import { describe, expect, it } from "vitest";
import { LocalQueue } from "./local-queue";
import type { JobRecord } from "./types";

const job = (id: string, principal: string) => ({ record: { id, principal } as JobRecord });

describe("LocalQueue", () => {
  it("starts the oldest job of the principal running the fewest, and none while every slot is taken", () => {
    const queue = new LocalQueue(2);
    const a1 = job("a1", "a");
    queue.started(a1);
    for (const j of [job("a2", "a"), job("a3", "a"), job("b1", "b")]) queue.enqueue(j);
    expect(queue.position("b1")).toBe(3);
    const next = queue.next();
    expect(next?.record.id).toBe("b1");
    queue.started(next as typeof a1);
    expect(queue.next()).toBeUndefined();
    expect(queue.remove(a1)).toEqual({ wasRunning: true, wasWaiting: false });
    expect(queue.next()?.record.id).toBe("a2");
    expect(queue.waitingRecords().map((r) => r.id)).toEqual(["a3"]);
  });

  it("puts a job first in line, and says when a removed job was waiting", () => {
    const queue = new LocalQueue(1);
    queue.started(job("r", "a"));
    const later = job("later", "a");
    queue.enqueue(later);
    queue.enqueueFirst(job("first", "a"));
    expect(queue.waitingJobs().map((j) => j.record.id)).toEqual(["first", "later"]);
    expect(queue.waitingRecords(later).map((r) => r.id)).toEqual(["first"]);
    expect(queue.remove(later)).toEqual({ wasRunning: false, wasWaiting: true });
    expect(queue.waiting).toBe(1);
  });
});
