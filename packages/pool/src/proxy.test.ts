import { describe, expect, it } from "vitest";
import { proxyFor } from "./proxy";

describe("proxyFor", () => {
  const env = { HTTPS_PROXY: "http://corp:3128", HTTP_PROXY: "proxy.local:8080", NO_PROXY: "localhost,.internal.dev,10.0.0.5:8443" };

  it("picks HTTPS_PROXY or HTTP_PROXY by scheme, adding http:// to a bare host", () => {
    expect(proxyFor("https://api.example.com/mcp", undefined, env)).toBe("http://corp:3128");
    expect(proxyFor("http://api.example.com/mcp", undefined, env)).toBe("http://proxy.local:8080");
    expect(proxyFor("https://api.example.com/mcp", undefined, { https_proxy: "http://lower:1" })).toBe("http://lower:1");
  });

  it("honours NO_PROXY hosts, subdomains and ports", () => {
    expect(proxyFor("http://localhost:3000/mcp", undefined, env)).toBeUndefined();
    expect(proxyFor("https://mcp.internal.dev/x", undefined, env)).toBeUndefined();
    expect(proxyFor("https://10.0.0.5:8443/x", undefined, env)).toBeUndefined();
    expect(proxyFor("https://10.0.0.5:9443/x", undefined, env)).toBe("http://corp:3128");
    expect(proxyFor("https://x.dev/", undefined, { ...env, NO_PROXY: "*" })).toBeUndefined();
  });

  it("lets a server's own setting win", () => {
    expect(proxyFor("https://x.dev/", false, env)).toBeUndefined();
    expect(proxyFor("http://localhost/", "http://mine:1", env)).toBe("http://mine:1");
  });
});
