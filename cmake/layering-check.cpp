// The empty program of the layering check (tgc_add_library in the top
// CMakeLists.txt): linked with all of one library's objects and only the
// libraries it declares, it links exactly when the declarations are complete.
int main() { return 0; }
