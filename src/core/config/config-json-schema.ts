import { z } from "zod";
import { configSchema } from "./config-schema.js";

/**
 * The JSON Schema of the configuration file as written (defaults optional), shipped as
 * `config.schema.json` so editors complete and check `config.json`.
 */
export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(configSchema, { io: "input", target: "draft-2020-12", unrepresentable: "any" }),
    $id: "https://github.com/webhook-channel/webhook-channel/config.schema.json",
    title: "webhook-channel configuration",
  };
}
