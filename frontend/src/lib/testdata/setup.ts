// Test setup: the one table of choices, as every snapshot brings it.
import { setChoices } from "../choices";
import choices from "./choices.json";

setChoices(choices);
