import type { HttpTransportSpec, OAuthSettings } from "./types";

/** What a login to this server uses: the entry's own `oauth` block, else the config's top-level one. */
export function oauthSettingsOf(spec: HttpTransportSpec): OAuthSettings | undefined {
  return spec.oauth ?? spec.oauthDefaults;
}
