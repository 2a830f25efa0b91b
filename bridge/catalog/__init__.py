"""What can be measured: calls, scenarios, vocabulary, inputs."""
