#include "commands/commands.h"

int main(int argc, char **argv)
{
	return commands_main(argc, argv);
}
