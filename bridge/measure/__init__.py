"""What a run does: the plan, start-up of runtimes and twins, the session and rounds."""
