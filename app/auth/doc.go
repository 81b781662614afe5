// Package auth holds the owner's sign-in: the password (argon2id), server-side
// sessions, the one-time set-up link, and personal API tokens, all kept
// hashed in Postgres. It must never import app/web, app/api or jobs.
package auth
