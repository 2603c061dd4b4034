#include "commands/commands.h"
#include "base/runner.h"

int main(int argc, char **argv)
{
	/* After a termination signal, nvshim ends as the child it ran did (runner.h). */
	return runner_end(commands_main(argc, argv));
}
