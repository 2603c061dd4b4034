"""`python -m nvshim ARGS...`: the installed nvshim executable with ARGS, in this process."""

from nvshim import main

if __name__ == "__main__":
    main()
