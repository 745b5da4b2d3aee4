/** Slack's own hosts, where a `response_url` may point (commercial and GovSlack). */
const SLACK_HOST = /^(?:[a-z0-9-]+\.)*(?:slack\.com|slack-gov\.com)$/;

/**
 * Whether a payload's `response_url` is Slack's: https on a Slack host, or the origin of `SLACK_API_URL` (a
 * Slack-compatible API the operator configured, such as a test double). Anything else is never posted to, so a
 * crafted payload cannot make the bot send an answer (a list of approvals, say) to a server of its choosing.
 */
export function isSlackResponseUrl(url: unknown, apiUrl: string): boolean {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  if (parsed.protocol === 'https:' && parsed.port === '' && SLACK_HOST.test(parsed.hostname)) return true;
  try {
    return parsed.origin === new URL(apiUrl).origin;
  } catch {
    return false;
  }
}
