import Mustache from 'mustache';
import { escapeForSlack, trimPreview } from '../preview-text.js';
import type { CallFacts } from './policy-rules.js';

/**
 * What is wrong with a policy file's `preview` template, or undefined. Unescaped tags (`{{{x}}}`, `{{&x}}`)
 * would let arguments write mrkdwn, and partials (`{{>x}}`) have nowhere to come from: both are refused.
 */
export function previewTemplateProblem(template: string): string | undefined {
  let tokens: unknown[];
  try {
    tokens = Mustache.parse(template);
  } catch (error) {
    return `is not a valid template (${error instanceof Error ? error.message : 'syntax error'})`;
  }
  const kinds = flatKinds(tokens);
  if (kinds.has('&') || kinds.has('{'))
    return 'uses an unescaped tag ({{{…}}} or {{&…}}); write {{…}}, which escapes values for Slack';
  if (kinds.has('>')) return 'uses a partial ({{>…}}); previews have none';
  return undefined;
}

/** The kinds of every token of a parsed template, sections included. */
function flatKinds(tokens: unknown[]): Set<string> {
  const kinds = new Set<string>();
  const walk = (list: unknown[]) => {
    for (const token of list) {
      if (!Array.isArray(token)) continue;
      if (typeof token[0] === 'string') kinds.add(token[0]);
      if (Array.isArray(token[4])) walk(token[4]);
    }
  };
  walk(tokens);
  return kinds;
}

/**
 * A call's preview from the policy's template: `{{args.title}}`, `{{tool}}`, `{{requester}}`, `{{channel}}`,
 * `{{team}}` (the same names as a rule's `when`), every value escaped for Slack, the text kept to two lines
 * and `MAX_PREVIEW_LENGTH` characters. Empty text means no preview.
 *
 * @example
 * renderPreviewTemplate('Create issue {{args.title}} in {{args.repo}}', facts); // "Create issue Bug in acme/app"
 */
export function renderPreviewTemplate(template: string, facts: CallFacts): string | undefined {
  const text = Mustache.render(template, { ...facts }, undefined, { escape: escapeForSlack });
  return trimPreview(text);
}
