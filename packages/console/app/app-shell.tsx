import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { forgetOperatorKey, operatorKey, rememberOperatorKey } from "./api";
import { ApprovalsPage } from "./approvals-page";
import { AuditPage } from "./audit-page";
import { CredentialsPage } from "./credentials-page";
import { MemoryPage } from "./memory-page";
import { ProvidersPage } from "./providers-page";
import { TracesPage } from "./traces-page";
import { WebhooksPage } from "./webhooks-page";

/** The pages, each at its own `#hash` so a link or a reload opens it. */
const pages: { id: string; title: string; page: ComponentType }[] = [
  { id: "credentials", title: "Credentials", page: CredentialsPage },
  { id: "providers", title: "Providers", page: ProvidersPage },
  { id: "audit", title: "Audit", page: AuditPage },
  { id: "webhooks", title: "Webhooks", page: WebhooksPage },
  { id: "traces", title: "Traces", page: TracesPage },
  { id: "approvals", title: "Approvals", page: ApprovalsPage },
  { id: "memory", title: "Memory", page: MemoryPage },
];

const pageFromHash = () => pages.find((page) => `#${page.id}` === window.location.hash) ?? pages[0];

/** Asks for the operator key once per tab; the field is a password field so it is not shown. */
function KeyForm(props: { onSaved: () => void }) {
  const [key, setKey] = useState("");
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        if (!key.trim()) return;
        rememberOperatorKey(key.trim());
        props.onSaved();
      }}
    >
      <label>
        Operator key
        <input
          type="password"
          name="operator-key"
          autocomplete="off"
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
      </label>
      <button type="submit">Use key</button>
    </form>
  );
}

export function App() {
  const [hasKey, setHasKey] = useState(operatorKey() !== undefined);
  const [current, setCurrent] = useState(pageFromHash);
  useEffect(() => {
    const follow = () => setCurrent(pageFromHash());
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  const Page = current.page;
  return (
    <>
      <header>
        <h1>Atrium console</h1>
        <nav aria-label="Pages">
          {pages.map((page) => (
            <button
              key={page.id}
              type="button"
              aria-current={page === current ? "page" : undefined}
              onClick={() => {
                window.location.hash = page.id;
              }}
            >
              {page.title}
            </button>
          ))}
        </nav>
        {hasKey && (
          <button
            type="button"
            onClick={() => {
              forgetOperatorKey();
              setHasKey(false);
            }}
          >
            Forget key
          </button>
        )}
      </header>
      <main>
        {hasKey ? (
          <Page />
        ) : (
          <>
            <p class="note">
              Enter the gateway API key (GATEWAY_API_KEYS). It stays in this tab only. A gateway
              running without inbound keys accepts any value.
            </p>
            <KeyForm onSaved={() => setHasKey(true)} />
          </>
        )}
      </main>
    </>
  );
}
