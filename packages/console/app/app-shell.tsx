import { useState } from "preact/hooks";
import { forgetOperatorKey, operatorKey, rememberOperatorKey } from "./api";
import { CredentialsPage } from "./credentials-page";

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
  return (
    <>
      <header>
        <h1>Atrium console</h1>
        <nav aria-label="Pages">
          <button type="button" aria-current="page">
            Credentials
          </button>
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
          <CredentialsPage />
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
