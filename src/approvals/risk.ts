import { z } from 'zod';

/** How much harm a call could do, as the policy file says; the card labels it and App Home orders by it. */
export const RISKS = ['low', 'medium', 'high', 'critical'] as const;
export const riskSchema = z.enum(RISKS);
export type Risk = z.infer<typeof riskSchema>;

/** Higher means riskier; a request without one sorts after every `low` one. */
function riskRank(risk: Risk | undefined): number {
  return risk === undefined ? -1 : RISKS.indexOf(risk);
}

/**
 * The order approvers work through requests in: highest risk first, then oldest first (then by id, so the
 * order is the same on every refresh).
 *
 * @example
 * [...pending].sort(byRiskThenAge);
 */
export function byRiskThenAge(
  a: { rule: { risk?: Risk | undefined }; createdAt: number; id: string },
  b: { rule: { risk?: Risk | undefined }; createdAt: number; id: string },
): number {
  return (
    riskRank(b.rule.risk) - riskRank(a.rule.risk) || a.createdAt - b.createdAt || a.id.localeCompare(b.id)
  );
}
