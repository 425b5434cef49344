/** File name of the state database inside `state_dir`. */
export const STATE_FILE = "webhook-channel.sqlite";
