/** File name of the state database inside `state_dir`. */
export const STATE_FILE = "webhook-channel.sqlite";

/**
 * File name of the timeline database inside `state_dir`: a file of its own, so that writing the
 * timeline never holds the lock that accepted jobs and their progress wait for.
 */
export const TIMELINE_FILE = "timeline.sqlite";
