/** A page's error (announced at once) and its notice of what an action did (announced politely). */
export function PageMessages(props: { error?: string; notice?: string }) {
  return (
    <>
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
      {props.notice && (
        <p class="note" role="status">
          {props.notice}
        </p>
      )}
    </>
  );
}
