import { Application } from "@agboss/core";
import { ReleaseModelProvider } from "./release-model-provider.js";
import { ReleaseWorkflow } from "./release-workflow.js";

/** The release desk: each reviewer's sign-off asks the thread's owner in the terminal. */
@Application({
  name: "release-application",
  workflows: [ReleaseWorkflow],
  providers: [ReleaseModelProvider],
})
export class ReleaseApplication {}
