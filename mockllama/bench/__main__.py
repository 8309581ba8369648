from mockllama.bench.run import main

main()
