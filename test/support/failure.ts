import { ChannelError } from "../../src/core/channel-error.js";

/** The ChannelError a promise rejects with; fails the test when it resolves or throws something else. */
export async function failure(promise: Promise<unknown>): Promise<ChannelError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ChannelError) return error;
    throw error;
  }
  throw new Error("expected a ChannelError");
}
