/* nn_tool.h - what the runtime tells its own command-line tools (nn-run,
 * the schema generator's input) beyond nn.h: the operators it implements.
 * Not part of the application API. */
#ifndef NN_TOOL_H
#define NN_TOOL_H

/* Called once per registered operator, in lookup order: its domain ("" for
 * the default one), its op type, and the ONNX since-versions its kernel
 * implements, ascending (n_versions of them).  The pointers are static. */
typedef void (*nn_op_list_fn)(void *user, const char *domain, const char *op_type,
                              const int *versions, int n_versions);

/* Every operator of the runtime's kernel tables, through fn. */
void nn_op_list(nn_op_list_fn fn, void *user);

#endif /* NN_TOOL_H */
