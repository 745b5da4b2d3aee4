import * as tables from '../schema/tables.js';
import { pgTableOf } from './postgres-tables.js';

/**
 * The PostgreSQL drizzle schema, built from the one description of the tables (src/db/schema/): what
 * `npm run db:generate` compares with drizzle/postgres/. Every table there is exported here.
 */
export const conversations = pgTableOf(tables.conversations);
export const conversationItems = pgTableOf(tables.conversationItems);
export const runs = pgTableOf(tables.runs);
export const deliveries = pgTableOf(tables.deliveries);
export const approvals = pgTableOf(tables.approvals);
export const standingApprovals = pgTableOf(tables.standingApprovals);
export const approvalVotes = pgTableOf(tables.approvalVotes);
export const delegations = pgTableOf(tables.delegations);
export const approvalCards = pgTableOf(tables.approvalCards);
export const approvalLimitKeys = pgTableOf(tables.approvalLimitKeys);
export const approvalLimitUses = pgTableOf(tables.approvalLimitUses);
export const auditEvents = pgTableOf(tables.auditEvents);
export const auditCursors = pgTableOf(tables.auditCursors);
export const auditCheckpoints = pgTableOf(tables.auditCheckpoints);
export const processedEvents = pgTableOf(tables.processedEvents);
export const acceptedRequests = pgTableOf(tables.acceptedRequests);
export const queuedMessages = pgTableOf(tables.queuedMessages);
export const notes = pgTableOf(tables.notes);
export const homeViewers = pgTableOf(tables.homeViewers);
export const greetedUsers = pgTableOf(tables.greetedUsers);
export const consoleSessions = pgTableOf(tables.consoleSessions);
export const consoleLinks = pgTableOf(tables.consoleLinks);
export const slackInstallations = pgTableOf(tables.slackInstallations);
export const teamAdmins = pgTableOf(tables.teamAdmins);
export const approvalDays = pgTableOf(tables.approvalDays);
export const approvalWaitDays = pgTableOf(tables.approvalWaitDays);
export const runUsageDays = pgTableOf(tables.runUsageDays);
export const deadlineDays = pgTableOf(tables.deadlineDays);
