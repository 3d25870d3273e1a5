// The SFrame corpus's programs' main (sframe_corpus.c holds the code the tables describe).
int corpus_entry(int argc);

int main(int argc, char** argv) {
  (void)argv;
  return corpus_entry(argc);
}
