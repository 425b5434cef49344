/** The webhook channel's current secret. */
export const WEBHOOK_SECRET = "s3cret-webhook-0123456789";
/** The webhook channel's previous secret, still accepted (a rotation in progress). */
export const WEBHOOK_PREVIOUS_SECRET = "s3cret-webhook-previous-0123";
/** The `hooks` channel's secret. */
export const HOOKS_SECRET = "h00ks-secret-0123456789";
/** The admin API's secret. */
export const ADMIN_SECRET = "fuzz-admin-secret-0123456789abcdef";
/** Every secret the app knows: none may ever appear in an answer. */
export const SECRETS = [WEBHOOK_SECRET, WEBHOOK_PREVIOUS_SECRET, HOOKS_SECRET, ADMIN_SECRET];
