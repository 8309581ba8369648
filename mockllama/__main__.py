from mockllama.cli import main

main()
