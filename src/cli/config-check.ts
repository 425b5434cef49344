import { nodeUnsupportedBrains } from "../core/brain/runtime-support.js";
import { errorMessage } from "../core/channel-error.js";
import { parseConfigJson } from "../core/config/config-json/parse-config-json.js";
import { type ConfigProblem, formatProblem } from "../core/config/config-problem.js";
import { envReferences, preflight, weakSecretProblems } from "../core/config/preflight/preflight.js";
import { signingProblems } from "../core/config/preflight/signing-problems.js";
import { urlReferences } from "../core/config/preflight/url-references.js";
import { isNodeTlsVariable, unboundTlsProblems } from "../core/config/preflight/workers-tls.js";
import { validateConfig } from "../core/config/validate-config.js";
import { clientTlsProblems, workersOnlyTls } from "../node/client-tls-problems.js";
import { readConfigFile } from "../node/read-config-file.js";
import { createSecretEnv, secretFileOf } from "../node/secret-env.js";
import { postgresServerVersion } from "../node/state/postgres/postgres-backend.js";
import { STATE_DIR_FIX, stateDirProblem } from "../node/state/sqlite/state-dir-folder.js";
import type { CliIo } from "./cli-io.js";
import { devVarsPathFor, readDevVars } from "./read-dev-vars.js";
import { urlReachability } from "./url-reachability.js";

/** What trying the configuration's URLs found, when nothing was tried. */
const NO_PROBES = { notes: [], warnings: [] } as const;

/** The Worker's variable that replaces the bundled config.json (see docs/workers.md). */
const CONFIG_JSON = "CONFIG_JSON";

/**
 * `config check [--preflight] [[--config] <file>]` (default `./config.json`; the CLI picks the
 * file): prints each problem with its JSON path and fix.
 * Exit 0 when usable (warnings allowed), 1 when problems were found. Never prints a secret.
 *
 * With `--preflight`, a `.dev.vars` file beside the configuration (what `wrangler dev` gives
 * the Worker) counts as well: a variable is confirmed when it is set in the environment (Node)
 * or there, and a note says where each one was found. A `CONFIG_JSON` in `.dev.vars`, which
 * replaces the file under `wrangler dev`, is validated too.
 *
 * On Node a variable may also be given as a file, `<NAME>_FILE` (see `createSecretEnv`): the
 * check reads the file as the service would, and an unreadable one is a problem.
 *
 * A channel's or the admin secret that is a placeholder or too short (`weakSecretReason`) is a
 * problem too, though the Node service only warns about it: a check is where to catch it.
 */
export async function runConfigCheck(file: string, withPreflight: boolean, io: CliIo): Promise<number> {
  const result = await readConfigFile(file);
  if (!result.ok) {
    io.err(`${file}: ${result.problems.length} problem(s)\n`);
    for (const problem of result.problems) io.err(`  error   ${formatProblem(problem)}\n`);
    return 1;
  }

  const devVarsPath = devVarsPathFor(file);
  let devVars: ReadonlyMap<string, string> | undefined;
  if (withPreflight) {
    try {
      devVars = await readDevVars(devVarsPath);
    } catch (error) {
      io.err(`  error   ${devVarsPath} cannot be read: ${errorMessage(error)}\n`);
      return 1;
    }
  }
  const nodeEnv = createSecretEnv(io.env);
  // A file that cannot be read counts as unset here; `preflight` reports it through `lookup`.
  const fromEnv = (name: string): string | undefined => {
    try {
      return nodeEnv(name);
    } catch {
      return undefined;
    }
  };
  const lookup = (name: string) => (isSet(fromEnv(name)) ? fromEnv(name) : (devVars?.get(name) ?? nodeEnv(name)));
  const variables = new Map(envReferences(result.config).map(({ path, variable }) => [path, variable]));
  const problems = withPreflight
    ? [
        ...preflight(result.config, lookup).map((problem) =>
          withDevVarsFix(
            inSecretFile(problem, variables.get(problem.path), io.env),
            variables.get(problem.path),
            devVars,
            devVarsPath,
          ),
        ),
        ...weakSecretProblems(result.config, lookup).map((problem) => {
          const variable = variables.get(problem.path);
          return variable === undefined || isSet(fromEnv(variable))
            ? problem
            : inDevVars(problem, variable, devVarsPath);
        }),
        ...(await signingProblems(result.config, lookup)),
      ]
    : [];
  // The TLS library's checks of webhook.tls, once preflight confirmed its variables (Node only).
  if (withPreflight) {
    const reported = new Set(problems.map((problem) => problem.path));
    problems.push(...clientTlsProblems(result.config, lookup).filter((problem) => !reported.has(problem.path)));
  }
  // The folder the service keeps its state in: a file in the way or no right to write stops a start.
  const stateDir = result.config.state_dir;
  if (withPreflight && stateDir !== undefined && result.config.postgres_url_env === undefined) {
    const problem = stateDirProblem(stateDir);
    if (problem !== undefined) problems.push({ path: "state_dir", message: problem, fix: STATE_DIR_FIX });
  }
  const override =
    devVars === undefined ? NO_OVERRIDE : await checkConfigJson(devVars.get(CONFIG_JSON), devVars, devVarsPath);
  const overrideProblems = override.problems;
  // With the URL confirmed set, preflight also connects: a wrong host or password shows here, not at start.
  const postgresVariable = result.config.postgres_url_env;
  const postgresUrl = postgresVariable === undefined ? undefined : fromEnv(postgresVariable);
  if (withPreflight && postgresUrl !== undefined && !problems.some((problem) => problem.path === "postgres_url_env")) {
    try {
      const version = await postgresServerVersion(postgresUrl);
      io.out(`  note    postgres_url_env: connected to PostgreSQL ${version}\n`);
    } catch (error) {
      problems.push({
        path: "postgres_url_env",
        message: `cannot connect to the database ${postgresVariable} names: ${errorMessage(error)}`,
        fix: "check the host, port, database, user and password in the URL, and that this machine may reach the server",
      });
    }
  }

  // The addresses the service will call, tried from here: a wrong host or port shows now.
  const reachable = withPreflight ? await urlReachability(urlReferences(result.config)) : NO_PROBES;
  for (const note of reachable.notes) io.out(`  note    ${note}\n`);

  // A workers-ai brain is fine in a file meant for Workers, so on Node it is only a warning.
  for (const warning of [
    ...result.warnings,
    ...reachable.warnings,
    ...nodeUnsupportedBrains(result.config),
    ...workersOnlyTls(result.config),
  ]) {
    io.err(`  warning ${formatProblem(warning)}\n`);
  }
  for (const warning of override.warnings)
    io.err(`  warning ${CONFIG_JSON} in ${devVarsPath}: ${formatProblem(warning)}\n`);
  for (const problem of problems) io.err(`  error   ${formatProblem(problem)}\n`);
  for (const problem of overrideProblems)
    io.err(`  error   ${CONFIG_JSON} in ${devVarsPath}: ${formatProblem(problem)}\n`);
  if (devVars !== undefined) {
    io.out(`  note    ${devVarsPath} was read too: wrangler dev gives its variables to the Worker\n`);
    for (const note of override.notes) io.out(`  note    ${CONFIG_JSON} in ${devVarsPath}: ${note}\n`);
    for (const [path, variable] of variables) {
      const file = secretFileOf(io.env, variable);
      const where = [
        isSet(fromEnv(variable))
          ? file === undefined
            ? "the environment (Node)"
            : `the file ${file} named by ${variable}_FILE (Node)`
          : undefined,
        isSet(devVars.get(variable)) ? ".dev.vars (wrangler dev)" : undefined,
      ].filter((place) => place !== undefined);
      if (where.length > 0) io.out(`  note    ${variable} (${path}) is set in ${where.join(" and ")}\n`);
    }
    if (isSet(devVars.get(CONFIG_JSON)) && overrideProblems.length === 0) {
      io.out(`  note    ${CONFIG_JSON} in ${devVarsPath} is valid; under wrangler dev it replaces ${file}\n`);
    }
  }
  if (problems.length > 0 || overrideProblems.length > 0) {
    io.err(`${file}: ${problems.length + overrideProblems.length} problem(s) in the environment\n`);
    return 1;
  }
  io.out(`${file}: OK${withPreflight ? " (environment confirmed)" : ""}\n`);
  return 0;
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}

/** Adds the `.dev.vars` way to set a missing variable to the core's fix. */
function withDevVarsFix(
  problem: ConfigProblem,
  variable: string | undefined,
  devVars: ReadonlyMap<string, string> | undefined,
  devVarsPath: string,
): ConfigProblem {
  if (devVars === undefined || variable === undefined) return problem;
  return {
    ...problem,
    message: `${problem.message}, nor in ${devVarsPath}`,
    fix: `${problem.fix}; for wrangler dev, add a line ${variable}=<value> to ${devVarsPath}`,
  };
}

/** Names the file a value came from (`<NAME>_FILE`): "is empty" is about the file, not the variable. */
function inSecretFile(problem: ConfigProblem, variable: string | undefined, env: CliIo["env"]): ConfigProblem {
  const file = variable === undefined ? undefined : secretFileOf(env, variable);
  // Only emptiness is the file's to fix; a value's own problem keeps its fix, and a file that
  // cannot be read is named by its problem already.
  if (file === undefined || variable === undefined || !problem.message.endsWith(" is empty")) return problem;
  return {
    ...problem,
    message: `${problem.message} (read from the file ${file}, named by ${variable}_FILE)`,
    fix: `write the value into ${file}, or set ${variable} itself`,
  };
}

/** Says that a weak secret came from `.dev.vars` (the environment had none), and how to replace it there. */
function inDevVars(problem: ConfigProblem, variable: string, devVarsPath: string): ConfigProblem {
  return {
    ...problem,
    message: `${problem.message} (read from ${devVarsPath})`,
    fix: `run npx webhook-channel secret and put its output in ${devVarsPath}: ${variable}=<the output>`,
  };
}

/** What the check of `CONFIG_JSON` in `.dev.vars` found. */
interface OverrideCheck {
  readonly problems: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
  /** What the tries of the value's URLs found reachable. */
  readonly notes: readonly string[];
}

const NO_OVERRIDE: OverrideCheck = { problems: [], warnings: [], notes: [] };

/**
 * Problems and warnings of a `CONFIG_JSON` value; none when it is absent or valid. Under wrangler
 * dev the Worker sees `.dev.vars`, not this shell's environment: the variables the value names are
 * confirmed there alone.
 */
async function checkConfigJson(
  text: string | undefined,
  devVars: ReadonlyMap<string, string>,
  devVarsPath: string,
): Promise<OverrideCheck> {
  if (!isSet(text)) return NO_OVERRIDE;
  const json = parseConfigJson(text, "it", "correct the JSON syntax");
  if (!json.ok) return { problems: [json.problem], warnings: [], notes: [] };
  const result = validateConfig(json.document);
  if (!result.ok) return { problems: result.problems, warnings: [], notes: [] };
  const lookup = (name: string) => devVars.get(name);
  const variables = new Map(envReferences(result.config).map(({ path, variable }) => [path, variable]));
  const inFile = (problem: ConfigProblem): ConfigProblem => {
    const variable = variables.get(problem.path);
    if (variable === undefined) return problem;
    return isSet(devVars.get(variable))
      ? inDevVars(problem, variable, devVarsPath)
      : {
          ...problem,
          message: `${variable} is not set in ${devVarsPath}`,
          fix: `add a line ${variable}=<value> to ${devVarsPath} (wrangler dev gives the Worker that file, not this shell's environment)`,
        };
  };
  // The Worker reads no `webhook.tls` PEM variable (its `mtls_binding` stands for them).
  const forWorker = (problem: ConfigProblem) => !isNodeTlsVariable(problem.path);
  const problems = [
    ...unboundTlsProblems(result.config),
    ...preflight(result.config, lookup).filter(forWorker).map(inFile),
    ...weakSecretProblems(result.config, lookup).filter(forWorker).map(inFile),
    ...(await signingProblems(result.config, lookup)),
  ];
  // What wrangler dev's Worker will call is the value's URLs, not the file's.
  const reachable = await urlReachability(urlReferences(result.config));
  // A Worker binds nothing: what a `bind` would expose is the Node service's concern.
  const warnings = result.warnings.filter((warning) => !warning.path.endsWith(".webhook.bind"));
  return { problems, warnings: [...warnings, ...reachable.warnings], notes: reachable.notes };
}
