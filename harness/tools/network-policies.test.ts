import { describe, expect, it } from 'vitest';
import { queuePatch } from './network-policies';

const QUEUE = `	queue := &expr.Queue{Num: uint16(c.config.QueueID)}
	if c.config.FailOpen {
		queue.Flag = expr.QueueFlagBypass
	}
`;

describe('queuePatch', () => {
  it("replaces both of upstream's queue statements with the xtables target and adds xt_queue.go beside them", () => {
    const files = queuePatch(`func a() {\n${QUEUE}\tuse(queue)\n}\nfunc b() {\n${QUEUE}\tuse(queue)\n}\n`, 'package networkpolicy\n');
    expect(files['pkg/networkpolicy/controller.go']).toBe(
      'func a() {\n\tqueue := xtQueue(uint16(c.config.QueueID), c.config.FailOpen)\n\tuse(queue)\n}\n' +
        'func b() {\n\tqueue := xtQueue(uint16(c.config.QueueID), c.config.FailOpen)\n\tuse(queue)\n}\n',
    );
    expect(files['pkg/networkpolicy/xt_queue.go']).toBe('package networkpolicy\n');
  });

  it('refuses an upstream whose queue statements moved, saying where to look', () => {
    expect(() => queuePatch(`func a() {\n${QUEUE}}\n`, '')).toThrow(
      /expected its queue statement twice in pkg\/networkpolicy\/controller.go, found it 1 times; update harness\/tools\/network-policies.ts/,
    );
  });
});
