import { useState } from "preact/hooks";
import { type MemoryOwner, memoryApi, type SearchResult } from "./memory-api";
import { PageMessages } from "./page-messages";

const rank = (value: number | null) => (value === null ? "—" : String(value));

/** SearchMemory's answer for the user, with why each result is there. */
export function MemorySearch(props: { owner: MemoryOwner }) {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<SearchResult[] | undefined>();
  const [error, setError] = useState<string | undefined>();

  async function run() {
    setError(undefined);
    try {
      setResults((await memoryApi.search(props.owner, query.trim())).results);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (query.trim()) void run();
        }}
      >
        <label>
          Query
          <input
            name="memory-query"
            value={query}
            onInput={(event) => setQuery(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <p class="note">
        What SearchMemory returns for this user. Lexical rank: the place of the best quoted turn in
        the BM25 ranking; vector rank: its place by cosine similarity; "—" where that retriever did
        not find it (graph facts are matched by name). Score is the fused relevance, 0–1.
      </p>
      <PageMessages error={error} />
      {results && results.length === 0 && <p class="note">Nothing found.</p>}
      {results && results.length > 0 && (
        <div class="table-wrap">
          <table class="search-results">
            <thead>
              <tr>
                <th>#</th>
                <th>Score</th>
                <th>Lexical rank</th>
                <th>Vector rank</th>
                <th>Source</th>
                <th>Content</th>
              </tr>
            </thead>
            <tbody>
              {results.map((r, i) => (
                <tr key={`${r.source_type}\0${r.source_id}`} data-source={r.source_id}>
                  <td>{i + 1}</td>
                  <td>{r.score.toFixed(3)}</td>
                  <td>{rank(r.lexical_rank)}</td>
                  <td>{rank(r.vector_rank)}</td>
                  <td>
                    {r.source_type}
                    <div class="mono">{r.source_id}</div>
                  </td>
                  <td class="content">{r.content}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
