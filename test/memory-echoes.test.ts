import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eventually } from "@atrium/kit/testing";
import { type Json, ok, startTestService, type TestService } from "./memory-service-harness.js";

/**
 * No echoes (issue 34): a stored turn says where its text came from, and an agent's answer that
 * quotes memory back is never search evidence, whether the agent said so (`source: memory`) or
 * not (its reply repeats an earlier turn word for word, or memory's own rendering of one).
 */
let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc?.stop());

const FACT = "I work as a night nurse at St Mary's hospital in Leeds.";

for (const name of ["rest", "grpc"] as const) {
  describe(`memory echoes over ${name}`, () => {
    const t = () => svc.transports.find((x) => x.name === name) ?? assert.fail(name);

    test("an answer quoting a stored fact neither outranks nor repeats the original", async () => {
      const { session_id } = await ok(t(), "createSession", {
        tenant_id: `echo-${name}`,
        user_id: "u1",
        agent_id: "a1",
      });
      const at = (minute: number) => `2026-11-20T09:${String(minute).padStart(2, "0")}:00Z`;
      const store = (user: string, agent: string, minute: number, extra: Json = {}) =>
        ok(t(), "storeInteraction", {
          session_id,
          user_message: user,
          agent_response: agent,
          timestamp: at(minute),
          ...extra,
        });
      await store(FACT, "That sounds demanding.", 0);
      await store("I like walking my dog by the canal on Sundays.", "Lovely.", 1);
      // An agent that does not say where its answer came from, quoting the fact word for word.
      await store("What do I do for work?", `You told me: ${FACT} Anything else?`, 2);
      // One that repeats memory's own rendering of a result.
      await store(
        "And my job again?",
        `From memory: [2026-11-20 09:00] User: ${FACT.slice(0, 40)}… (night nurse)`,
        3,
      );
      // One that says so.
      await store("Where do I work, night or day?", `Night nurse, St Mary's hospital, Leeds.`, 4, {
        agent_response_source: "memory",
      });

      const context = await ok(t(), "getContext", { session_id, limit: 10 });
      assert.deepEqual(
        context.stm_events.map((e: Json) => `${e.role}/${e.source}`),
        [
          ...["user/user", "agent/agent"],
          ...["user/user", "agent/agent"],
          ...["user/user", "agent/agent"],
          ...["user/user", "agent/agent"],
          ...["user/user", "agent/memory"],
        ],
      );

      const search = async () =>
        (await ok(t(), "searchMemory", { session_id, query: "night nurse hospital Leeds" }))
          .results as Json[];
      // Once the chain check has counted the turns, the lexical side finds the fact too.
      await eventually(
        "the fact is found",
        async () => (await search())[0]?.turns?.some((x: Json) => x.text === FACT) === true,
      );
      const results = await search();
      const turns: Json[] = results.flatMap((r) => r.turns ?? []);
      const mentions = turns.filter((x) => /night nurse/i.test(x.text));
      assert.deepEqual(
        mentions.map((x) => [x.role, x.source, x.text]),
        [["user", "user", FACT]],
        JSON.stringify(turns, null, 1),
      );
      for (const r of results)
        assert.doesNotMatch(r.content, /You told me|From memory|Night nurse,/);
      assert.ok(turns.every((x) => x.source !== "memory"));
    });

    test("a source that is not one of the listed ones is the caller's error, naming the field", async () => {
      const { session_id } = await ok(t(), "createSession", {
        tenant_id: `echo-${name}`,
        user_id: "u2",
      });
      const interaction = await t().call("storeInteraction", {
        session_id,
        user_message: "hello",
        agent_response: "hi",
        agent_response_source: "user",
      });
      assert.equal(interaction.ok, false);
      if (!interaction.ok) {
        assert.equal(interaction.code, "InvalidArgument");
        assert.match(interaction.message, /agent_response_source/);
      }
      const event = await t().call("storeEvent", {
        session_id,
        type: "observation",
        content: "page text",
        source: "web",
      });
      assert.equal(event.ok, false);
      if (!event.ok) {
        assert.equal(event.code, "InvalidArgument");
        assert.match(event.message, /source/);
      }
      await ok(t(), "storeEvent", {
        session_id,
        role: "agent",
        type: "observation",
        content: "page text",
        source: "tool",
      });
      const context = await ok(t(), "getContext", { session_id });
      assert.deepEqual(
        context.stm_events.map((e: Json) => [e.role, e.source]),
        [["agent", "tool"]],
      );
    });
  });
}
