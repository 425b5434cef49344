import type { Random } from "../../shared/seeded-random.js";
import { SECRET_MARK } from "./fuzz-secrets.js";
import type { World } from "./fuzz-world.js";

/**
 * The whole environment of one run (nothing of the real one): the admin secret, signing keys,
 * the webhook secret and the Postgres URL, each set, unset, empty or unusable, and holding the
 * planted secret wherever a secret goes. Every Postgres URL reaches only the dead loopback port
 * or cannot be read at all, so nothing leaves the machine.
 */
export function genEnv(r: Random, w: World): Record<string, string> {
  const env: Record<string, string> = {};
  const maybe = (name: string, p: number, value: () => string) => {
    if (r.chance(p)) env[name] = value();
  };
  const pg = `127.0.0.1:${w.deadPort}`;
  maybe("WEBHOOK_ADMIN_SECRET", 0.6, () =>
    r.pick([`admin-${SECRET_MARK}-0123456789abcdef`, SECRET_MARK, "", ` ${SECRET_MARK}\n`]),
  );
  maybe("OTHER_ADMIN", 0.3, () => r.pick([`other-${SECRET_MARK}-0123456789abcdef`, ""]));
  maybe("WEBHOOK_SIGNING_KEY", 0.4, () =>
    r.pick([
      w.secretKey,
      `${w.secretKey} ${w.secretKey}`,
      `${w.secretKey} whsk_${SECRET_MARK}`,
      `whsk_${SECRET_MARK}`,
      `whpk_${SECRET_MARK}`,
      `whsec_${SECRET_MARK}`,
      SECRET_MARK,
      " ",
      "",
    ]),
  );
  maybe("WEBHOOK_SIGNING_KEY_FILE", 0.2, () => r.pick([w.keyFile, w.badKeyFile, w.files.missing, w.root]));
  maybe("OTHER_KEY", 0.2, () => r.pick([w.secretKey, `whsk_${SECRET_MARK}AAAA`, `${SECRET_MARK}\n${SECRET_MARK}`]));
  maybe("OTHER_KEY_FILE", 0.1, () => r.pick([w.keyFile, w.badKeyFile, w.files.missing]));
  maybe("WEBHOOK_SECRET", 0.5, () =>
    r.pick([`${SECRET_MARK}-long-enough-0123456789abcdefghij`, SECRET_MARK, "replace-me", "", `${SECRET_MARK}\u0000`]),
  );
  maybe("HOOK_KEY", 0.1, () => `${SECRET_MARK}-hook-0123456789abcdefghijklmn`);
  maybe("PG_URL", 0.6, () =>
    r.pick([
      `postgres://fuzz:${SECRET_MARK}@${pg}/db`,
      `postgresql://fuzz:${SECRET_MARK}@${pg}/db?sslmode=disable`,
      `postgres://fuzz:${SECRET_MARK}@${pg}/db@x`,
      `postgres://fuzz:${SECRET_MARK}@${pg}/db?application_name=a@b/c`,
      `postgres://fuzz:${SECRET_MARK}@${pg}/db#${SECRET_MARK}@x`,
      "",
    ]),
  );
  return env;
}
