/**
 * The app the app server shows (bundled for the browser into app-view.global.js): it shows the tool's
 * input and result as the host hands them over, and its button calls the server's `refresh_sales`
 * (a tool only an app may call) through the host, by the server's own name for it.
 */
import { App } from "@modelcontextprotocol/ext-apps";

const app = new App({ name: "sales-view", version: "1.0.0" }, {});
const show = (id: string, value: unknown) => {
  const element = document.getElementById(id);
  if (element) element.textContent = typeof value === "string" ? value : JSON.stringify(value);
};
let region = "";
app.ontoolinput = (params) => {
  region = String(params.arguments?.region ?? "");
  show("input", params.arguments ?? {});
};
app.ontoolresult = (result) => show("result", result.structuredContent ?? result.content);
document.getElementById("refresh")?.addEventListener("click", async () => {
  try {
    const result = await app.callServerTool({ name: "refresh_sales", arguments: { region } });
    show("refreshed", result.isError ? `error: ${JSON.stringify(result.content)}` : (result.structuredContent ?? result.content));
  } catch (error) {
    show("refreshed", `error: ${(error as Error).message}`);
  }
});
void app.connect().then(() => show("status", "connected"));
