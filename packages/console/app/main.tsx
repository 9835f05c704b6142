import { render } from "preact";
import { App } from "./app-shell";

const root = document.getElementById("root");
if (root) render(<App />, root);
