#include <stdio.h>
int main(void) {
  puts("progrun");
  return 0;
}
