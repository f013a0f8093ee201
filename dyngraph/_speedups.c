/* The event spine's per-event helpers, in C: preview, preview_and_norm, where_from_stack, emit,
 * emit_edge_grad, emit_grad_computed, emit_op_created, and the live view's listener (Collector)
 * and filter (keep_rows).
 *
 * The definitions are the Python functions of the same names in dyngraph/events.py; read those.
 * While a widget or a recording listens, these run for every node and every gradient, and in
 * Python they are most of what an attached view costs per op (see NOTE [speedups] there). This
 * file computes the same results without the interpreter's overhead:
 *
 *   - preview / preview_and_norm read C-contiguous float32 and float64 numpy arrays directly;
 *     any other array (other dtypes, strided views, CuPy) goes to the Python definition.
 *   - where_from_stack walks frames as the Python one does and shares its caches.
 *   - emit delivers an event to the subscribers as the Python one does, reading and setting
 *     the same module globals of events.py (active, _dispatching, _dispatch_order) and
 *     handing a subscriber that raised to the same events._drop.
 *   - Collector appends each event to a list and calls back every n-th event, as the live
 *     view's listener in dyngraph/jupyter/view.py does in Python.
 *
 * tests/test_speedups.py checks that both give the same answers. Building this file is
 * optional: without a C compiler, dyngraph uses the Python definitions.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>

#if PY_VERSION_HEX < 0x030B0000 /* Python 3.10: frame.f_lasti counts code units of 2 bytes */
#include <frameobject.h>
static int PyFrame_GetLasti(PyFrameObject *frame) { return frame->f_lasti * 2; }
#endif

#define PREVIEW_SIZE 6 /* events.PREVIEW_SIZE */

/* Set once by configure(): the Python definitions (the fallbacks) and the caches shared with
   events.py. */
static PyObject *py_preview = NULL;          /* events._py_preview */
static PyObject *py_preview_and_norm = NULL; /* events._py_preview_and_norm */
static PyObject *new_where = NULL;           /* events._new_where(frame) -> Where */
static PyObject *is_internal_file = NULL;    /* events._is_internal_file: filename -> bool */
static PyObject *where_cache = NULL;         /* events._where_cache: key -> (code, Where) */
static PyObject *package_dir = NULL;         /* events._PACKAGE_DIR */
static PyObject *getframe = NULL;            /* sys._getframe */
static PyObject *hands_back_cache = NULL;    /* events._hands_back_cache: (code, lasti) -> bool */
static PyObject *hands_back = NULL;          /* events._hands_back(code, lasti) -> bool */
static PyObject *unnamed = NULL;             /* events._unnamed(where) -> Where */
static Py_ssize_t where_cache_limit = 10000;

static int configured(void)
{
    if (getframe == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure() first "
                                            "(importing dyngraph.events does)");
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------- previews */

/* A float32 or float64 array in native byte order and row-major layout, or NULL. */
static PyArrayObject *readable_array(PyObject *obj)
{
    if (Py_TYPE(obj) != &PyArray_Type) {
        return NULL;
    }
    PyArrayObject *array = (PyArrayObject *)obj;
    int type = PyArray_TYPE(array);
    if ((type != NPY_FLOAT && type != NPY_DOUBLE) || !PyArray_ISNOTSWAPPED(array) ||
        !PyArray_IS_C_CONTIGUOUS(array)) {
        return NULL;
    }
    return array;
}

static double element(PyArrayObject *array, npy_intp i)
{
    if (PyArray_TYPE(array) == NPY_FLOAT) {
        return (double)((const float *)PyArray_DATA(array))[i];
    }
    return ((const double *)PyArray_DATA(array))[i];
}

/* The first PREVIEW_SIZE numbers as a tuple of Python floats. */
static PyObject *first_numbers(PyArrayObject *array)
{
    npy_intp n = PyArray_SIZE(array);
    if (n > PREVIEW_SIZE) {
        n = PREVIEW_SIZE;
    }
    PyObject *preview = PyTuple_New(n);
    if (preview == NULL) {
        return NULL;
    }
    for (npy_intp i = 0; i < n; i++) {
        PyObject *number = PyFloat_FromDouble(element(array, i));
        if (number == NULL) {
            Py_DECREF(preview);
            return NULL;
        }
        PyTuple_SET_ITEM(preview, i, number);
    }
    return preview;
}

/* The L2 norm: nan if any number is nan, else inf if any is inf; squares are summed in double
   and rescaled by the largest number when they overflow or underflow, as math.hypot does. */
static double l2_norm(PyArrayObject *array)
{
    npy_intp n = PyArray_SIZE(array);
    double sum = 0.0, largest = 0.0;
    int has_inf = 0, has_nan = 0;
    for (npy_intp i = 0; i < n; i++) {
        double x = fabs(element(array, i));
        if (isinf(x)) {
            has_inf = 1;
        }
        else if (isnan(x)) {
            has_nan = 1;
        }
        else if (x > largest) {
            largest = x;
        }
        sum += x * x;
    }
    if (has_nan) {
        return NAN;
    }
    if (has_inf) {
        return INFINITY;
    }
    if (isinf(sum) || (sum < 1e-300 && largest > 0.0)) { /* overflow or underflow: rescale */
        sum = 0.0;
        for (npy_intp i = 0; i < n; i++) {
            double x = element(array, i) / largest;
            sum += x * x;
        }
        return largest * sqrt(sum);
    }
    return sqrt(sum);
}

static PyObject *preview(PyObject *module, PyObject *obj)
{
    PyArrayObject *array = readable_array(obj);
    if (array == NULL) {
        return configured() ? PyObject_CallOneArg(py_preview, obj) : NULL;
    }
    return first_numbers(array);
}

static PyObject *preview_and_norm(PyObject *module, PyObject *obj)
{
    PyArrayObject *array = readable_array(obj);
    if (array == NULL) {
        return configured() ? PyObject_CallOneArg(py_preview_and_norm, obj) : NULL;
    }
    PyObject *preview = first_numbers(array);
    if (preview == NULL) {
        return NULL;
    }
    PyObject *norm = PyFloat_FromDouble(l2_norm(array));
    if (norm == NULL) {
        Py_DECREF(preview);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, preview, norm);
    Py_DECREF(preview);
    Py_DECREF(norm);
    return result;
}

/* ------------------------------------------------------------------------------- where */

/* 1 if the file is inside the dyngraph package, 0 if not, -1 on error (cached by filename). */
static int internal_file(PyObject *filename)
{
    PyObject *known = PyDict_GetItemWithError(is_internal_file, filename); /* borrowed */
    if (known != NULL) {
        return known == Py_True;
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    Py_ssize_t match = PyUnicode_Tailmatch(filename, package_dir, 0, PY_SSIZE_T_MAX, -1);
    if (match < 0 ||
        PyDict_SetItem(is_internal_file, filename, match ? Py_True : Py_False) < 0) {
        return -1;
    }
    return (int)match;
}

/* 1 if this frame of dyngraph's returns the value of the call it makes, 0 if not, -1 on error
   (events._hands_back, whose cache is read here first). */
static int frame_hands_back(PyCodeObject *code, PyObject *frame)
{
    PyObject *lasti = PyLong_FromLong(PyFrame_GetLasti((PyFrameObject *)frame));
    if (lasti == NULL) {
        return -1;
    }
    PyObject *key = PyTuple_Pack(2, (PyObject *)code, lasti);
    Py_DECREF(lasti);
    if (key == NULL) {
        return -1;
    }
    PyObject *known = PyDict_GetItemWithError(hands_back_cache, key); /* borrowed */
    if (known != NULL) {
        Py_DECREF(key);
        return known == Py_True;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(hands_back, PyTuple_GET_ITEM(key, 0),
                                                    PyTuple_GET_ITEM(key, 1), NULL);
    Py_DECREF(key);
    if (result == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

static PyObject *where_from_stack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* sys._getframe(0) called from here is our caller's frame: the Python definition's
       frame ``depth`` is frame ``depth - 1`` here. */
    long depth = 1;
    int named = 0;
    int handed_back = 1;
    if (!configured()) {
        return NULL;
    }
    if (nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "where_from_stack() takes at most two arguments");
        return NULL;
    }
    if (nargs >= 1) {
        depth = PyLong_AsLong(args[0]);
        if (depth == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (nargs == 2) {
        named = PyObject_IsTrue(args[1]);
        if (named < 0) {
            return NULL;
        }
    }
    PyObject *level = PyLong_FromLong(depth > 0 ? depth - 1 : 0);
    if (level == NULL) {
        return NULL;
    }
    PyObject *frame = PyObject_CallOneArg(getframe, level);
    Py_DECREF(level);
    if (frame == NULL) {
        return NULL;
    }
    PyCodeObject *code = NULL;
    while (frame != NULL) {
        code = PyFrame_GetCode((PyFrameObject *)frame);
        int internal = internal_file(code->co_filename);
        if (internal < 0) {
            Py_DECREF(code);
            Py_DECREF(frame);
            return NULL;
        }
        if (!internal) {
            break;
        }
        if (named && handed_back) {
            handed_back = frame_hands_back(code, frame);
            if (handed_back < 0) {
                Py_DECREF(code);
                Py_DECREF(frame);
                return NULL;
            }
        }
        Py_DECREF(code);
        code = NULL;
        PyObject *back = (PyObject *)PyFrame_GetBack((PyFrameObject *)frame);
        Py_DECREF(frame);
        frame = back;
    }
    if (frame == NULL) {
        Py_RETURN_NONE;
    }
    /* A loop runs the same instruction many times: its Where is cached, under the key the
       Python definition uses, (id(code), f_lasti). */
    PyObject *key = Py_BuildValue("(Ni)", PyLong_FromVoidPtr(code),
                                  PyFrame_GetLasti((PyFrameObject *)frame));
    PyObject *where = NULL;
    if (key == NULL) {
        goto done;
    }
    PyObject *cached = PyDict_GetItemWithError(where_cache, key); /* borrowed */
    if (cached != NULL && PyTuple_GET_ITEM(cached, 0) == (PyObject *)code) {
        where = Py_NewRef(PyTuple_GET_ITEM(cached, 1));
        goto done;
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    if (PyDict_GET_SIZE(where_cache) > where_cache_limit) {
        PyDict_Clear(where_cache);
    }
    where = PyObject_CallOneArg(new_where, frame);
    if (where == NULL) {
        goto done;
    }
    PyObject *entry = PyTuple_Pack(2, (PyObject *)code, where);
    if (entry == NULL || PyDict_SetItem(where_cache, key, entry) < 0) {
        Py_CLEAR(where);
    }
    Py_XDECREF(entry);
done:
    Py_XDECREF(key);
    Py_DECREF(code);
    Py_DECREF(frame);
    if (where != NULL && !handed_back) { /* a part of what the line assigns: no target */
        Py_SETREF(where, PyObject_CallOneArg(unnamed, where));
    }
    return where;
}

/* ------------------------------------------------------------------------------- emit */

static PyObject *events_globals = NULL; /* events.py's module dict: the spine's state */
static PyObject *drop = NULL;           /* events._drop(key, fn, exc, stacklevel) */
static PyObject *name_active = NULL, *name_dispatching = NULL, *name_dispatch_order = NULL;

/* events.emit: deliver ``event`` to every subscriber, in order; a subscriber that raises an
   Exception is handed to events._drop, anything else (KeyboardInterrupt) propagates. */
static PyObject *emit(PyObject *module, PyObject *event)
{
    if (events_globals == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first "
                                            "(importing dyngraph.events does)");
        return NULL;
    }
    PyObject *active = PyDict_GetItemWithError(events_globals, name_active); /* borrowed */
    if (active != Py_True) {
        if (active == NULL && PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *order = PyDict_GetItemWithError(events_globals, name_dispatch_order);
    if (order == NULL || !PyTuple_Check(order)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "events._dispatch_order must be a tuple");
        }
        return NULL;
    }
    Py_INCREF(order); /* the loop runs over the subscribers as they were when it began */
    /* a subscriber that creates tensors does not re-enter */
    if (PyDict_SetItem(events_globals, name_active, Py_False) < 0 ||
        PyDict_SetItem(events_globals, name_dispatching, Py_True) < 0) {
        Py_DECREF(order);
        return NULL;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(order) && !failed; i++) {
        PyObject *entry = PyTuple_GET_ITEM(order, i); /* (key, fn) */
        PyObject *key = PyTuple_GET_ITEM(entry, 0), *fn = PyTuple_GET_ITEM(entry, 1);
        PyObject *result = PyObject_CallOneArg(fn, event);
        if (result != NULL) {
            Py_DECREF(result);
            continue;
        }
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            failed = 1; /* propagates, after the state is restored below */
            break;
        }
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        if (traceback != NULL) {
            PyException_SetTraceback(value, traceback);
        }
        /* stacklevel 2: no Python frame of emit's lies between _drop and emit's caller */
        PyObject *dropped = PyObject_CallFunction(drop, "OOOi", key, fn, value, 2);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        if (dropped == NULL) {
            failed = 1;
        }
        Py_XDECREF(dropped);
    }
    Py_DECREF(order);
    /* finally: _dispatching = False; active = bool(_dispatch_order) (as it is now: _drop may
       have changed it), keeping a pending exception */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *now = PyDict_GetItemWithError(events_globals, name_dispatch_order);
    int any = now == NULL ? -1 : PyObject_IsTrue(now);
    if (any < 0 || PyDict_SetItem(events_globals, name_dispatching, Py_False) < 0 ||
        PyDict_SetItem(events_globals, name_active, any ? Py_True : Py_False) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return NULL;
    }
    PyErr_Restore(type, value, traceback);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------- collector */

/* A subscriber that appends each event to a list and calls tick() every n-th event, n being
   what tick() returned last (1 at first): the live view's listener, whose definition is
   ``_collecting_listener`` in dyngraph/jupyter/view.py. */
typedef struct {
    PyObject_HEAD
    PyObject *events; /* the list events are appended to */
    PyObject *tick;   /* called with no arguments; returns the next stride (an int >= 1) */
    long countdown;   /* events until the next tick */
    vectorcallfunc vectorcall;
} Collector;

static PyObject *collector_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames)
{
    Collector *self = (Collector *)self_;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Collector takes one event");
        return NULL;
    }
    if (PyList_Append(self->events, args[0]) < 0) {
        return NULL;
    }
    if (--self->countdown > 0) {
        Py_RETURN_NONE;
    }
    PyObject *stride = PyObject_CallNoArgs(self->tick);
    if (stride == NULL) {
        self->countdown = 1;
        return NULL;
    }
    long next = PyLong_AsLong(stride);
    Py_DECREF(stride);
    if (next == -1 && PyErr_Occurred()) {
        self->countdown = 1;
        return NULL;
    }
    self->countdown = next > 0 ? next : 1;
    Py_RETURN_NONE;
}

static PyObject *collector_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *events, *tick;
    if (!PyArg_ParseTuple(args, "O!O:Collector", &PyList_Type, &events, &tick)) {
        return NULL;
    }
    Collector *self = (Collector *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->events = Py_NewRef(events);
    self->tick = Py_NewRef(tick);
    self->countdown = 1;
    self->vectorcall = collector_vectorcall;
    return (PyObject *)self;
}

static int collector_traverse(Collector *self, visitproc visit, void *arg)
{
    Py_VISIT(self->events);
    Py_VISIT(self->tick);
    return 0;
}

static int collector_clear(Collector *self)
{
    Py_CLEAR(self->events);
    Py_CLEAR(self->tick);
    return 0;
}

static void collector_dealloc(Collector *self)
{
    PyObject_GC_UnTrack(self);
    collector_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef collector_members[] = {
    {"countdown", T_LONG, offsetof(Collector, countdown), READONLY, "events until the next tick"},
    {NULL},
};

static PyTypeObject CollectorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dyngraph._speedups.Collector",
    .tp_basicsize = sizeof(Collector),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Collector(events, tick): appends each event to the list events and calls "
              "tick() every n-th event, n being what tick() returned last (1 at first).",
    .tp_new = collector_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Collector, vectorcall),
    .tp_traverse = (traverseproc)collector_traverse,
    .tp_clear = (inquiry)collector_clear,
    .tp_dealloc = (destructor)collector_dealloc,
    .tp_members = collector_members,
};

/* events.emit_edge_grad: emit(EdgeGrad(node, input, position, preview(contribution),
   reduced_from)), the event built in place (the NamedTuple's tuple filled directly). */
static PyObject *edge_grad_type = NULL; /* events.EdgeGrad */

static PyObject *emit_edge_grad(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "emit_edge_grad() takes 5 arguments");
        return NULL;
    }
    if (edge_grad_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *values = preview(module, args[3]);
    if (values == NULL) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)edge_grad_type;
    PyObject *event = type->tp_alloc(type, 5);
    if (event == NULL) {
        Py_DECREF(values);
        return NULL;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(args[0]));
    PyTuple_SET_ITEM(event, 1, Py_NewRef(args[1]));
    PyTuple_SET_ITEM(event, 2, Py_NewRef(args[2]));
    PyTuple_SET_ITEM(event, 3, values);
    PyTuple_SET_ITEM(event, 4, Py_NewRef(args[4]));
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* events.emit_grad_computed: emit(GradComputed(id, *preview_and_norm(gradient), accumulated)),
   the event built in place. */
static PyObject *grad_computed_type = NULL; /* events.GradComputed */

static PyObject *emit_grad_computed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "emit_grad_computed() takes 3 arguments");
        return NULL;
    }
    if (grad_computed_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *pair = preview_and_norm(module, args[1]); /* (preview, norm) */
    if (pair == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        Py_DECREF(pair);
        PyErr_SetString(PyExc_TypeError, "preview_and_norm must return (preview, norm)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)grad_computed_type;
    PyObject *event = type->tp_alloc(type, 4);
    if (event == NULL) {
        Py_DECREF(pair);
        return NULL;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(args[0]));
    PyTuple_SET_ITEM(event, 1, Py_NewRef(PyTuple_GET_ITEM(pair, 0)));
    PyTuple_SET_ITEM(event, 2, Py_NewRef(PyTuple_GET_ITEM(pair, 1)));
    PyTuple_SET_ITEM(event, 3, Py_NewRef(args[2]));
    Py_DECREF(pair);
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* events.emit_op_created: emit(NodeCreated(id, op, inputs, array.shape, dtype_name(array.dtype),
   device_of(array), True, False, name, scope, where, preview(array), saved_bytes, recomputing,
   elapsed)), the event built in place. A numpy array is on the CPU; the dtype's name comes from
   events._dtype_names, the cache dtype_name() fills (it is called on a miss, as is
   backend.device_of for any other array). */
static PyObject *str_shape = NULL, *str_dtype = NULL, *str_cpu = NULL;
static PyObject *node_created_type = NULL; /* events.NodeCreated */
static PyObject *name_dtype_names = NULL, *name_dtype_name = NULL;
static PyObject *name_recomputing = NULL, *name_backend = NULL;

static PyObject *events_global(PyObject *name) /* a new reference, or NULL with an error */
{
    PyObject *value = PyDict_GetItemWithError(events_globals, name);
    if (value == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_RuntimeError, "dyngraph.events has no %R", name);
    }
    return Py_XNewRef(value);
}

static PyObject *dtype_name_of(PyObject *array)
{
    PyObject *dtype = PyObject_GetAttr(array, str_dtype);
    if (dtype == NULL) {
        return NULL;
    }
    PyObject *names = events_global(name_dtype_names);
    PyObject *name = names == NULL ? NULL : PyDict_GetItemWithError(names, dtype);
    Py_XDECREF(names);
    if (name != NULL) {
        Py_DECREF(dtype);
        return Py_NewRef(name);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(dtype);
        return NULL;
    }
    PyObject *function = events_global(name_dtype_name);
    name = function == NULL ? NULL : PyObject_CallOneArg(function, dtype);
    Py_XDECREF(function);
    Py_DECREF(dtype);
    return name;
}

static PyObject *device_of(PyObject *array)
{
    if (Py_TYPE(array) == &PyArray_Type) {
        return Py_NewRef(str_cpu);
    }
    PyObject *backend = events_global(name_backend);
    PyObject *device = backend == NULL ? NULL : PyObject_CallMethod(backend, "device_of", "O",
                                                                    array);
    Py_XDECREF(backend);
    return device;
}

static PyObject *emit_op_created(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "emit_op_created() takes 9 arguments");
        return NULL;
    }
    if (node_created_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "dyngraph._speedups: call configure_emit() first");
        return NULL;
    }
    PyObject *array = args[3];
    PyObject *fields[15] = {NULL};
    fields[0] = Py_NewRef(args[0]);              /* id */
    fields[1] = Py_NewRef(args[1]);              /* op */
    fields[2] = Py_NewRef(args[2]);              /* inputs */
    fields[3] = PyObject_GetAttr(array, str_shape);
    fields[4] = fields[3] == NULL ? NULL : dtype_name_of(array);
    fields[5] = fields[4] == NULL ? NULL : device_of(array);
    fields[6] = Py_NewRef(Py_True);              /* requires_grad */
    fields[7] = Py_NewRef(Py_False);             /* is_leaf */
    fields[8] = Py_NewRef(args[4]);              /* name */
    fields[9] = Py_NewRef(args[5]);              /* scope */
    fields[10] = Py_NewRef(args[6]);             /* where */
    fields[11] = fields[5] == NULL ? NULL : preview(module, array);
    fields[12] = Py_NewRef(args[7]);             /* saved_bytes */
    fields[13] = fields[11] == NULL ? NULL : events_global(name_recomputing);
    fields[14] = Py_NewRef(args[8]);             /* elapsed */
    PyTypeObject *type = (PyTypeObject *)node_created_type;
    PyObject *event = fields[13] == NULL ? NULL : type->tp_alloc(type, 15);
    if (event == NULL) {
        for (int i = 0; i < 15; i++) {
            Py_XDECREF(fields[i]);
        }
        return NULL;
    }
    for (int i = 0; i < 15; i++) {
        PyTuple_SET_ITEM(event, i, fields[i]); /* steals each reference */
    }
    PyObject *result = emit(module, event);
    Py_DECREF(event);
    return result;
}

/* dyngraph.jupyter.view.keep_rows: the live view's filter, once per event (read the Python
   definition there). Events are the NamedTuples of events.py: a node_created, grad_computed or
   version_bumped has its node id at index 0, an edge_grad its node and input at 0 and 1. */
static PyObject *str_kind = NULL, *kind_node_created = NULL, *kind_grad_computed = NULL;
static PyObject *kind_version_bumped = NULL, *kind_edge_grad = NULL;

static int same_kind(PyObject *kind, PyObject *name) /* 1, 0, or -1 with an error */
{
    return kind == name ? 1 : PyObject_RichCompareBool(kind, name, Py_EQ);
}

static PyObject *keep_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_Check(args[0]) || !PySet_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "keep_rows(received: list, node_ids: set, wheres: "
                                         "dict, share, node_room, room, where_index)");
        return NULL;
    }
    if (str_kind == NULL) {
        str_kind = PyUnicode_InternFromString("kind");
        kind_node_created = PyUnicode_InternFromString("node_created");
        kind_grad_computed = PyUnicode_InternFromString("grad_computed");
        kind_version_bumped = PyUnicode_InternFromString("version_bumped");
        kind_edge_grad = PyUnicode_InternFromString("edge_grad");
        if (str_kind == NULL || kind_node_created == NULL || kind_grad_computed == NULL ||
            kind_version_bumped == NULL || kind_edge_grad == NULL) {
            return NULL;
        }
    }
    PyObject *received = args[0], *node_ids = args[1], *wheres = args[2], *share = args[3];
    Py_ssize_t node_room = PyLong_AsSsize_t(args[4]);
    Py_ssize_t room = PyLong_AsSsize_t(args[5]);
    Py_ssize_t where_index = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t dropped_nodes = 0, dropped_events = 0;
    PyObject *kept = PyList_New(0);
    if (kept == NULL) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(received);
    for (Py_ssize_t i = 0; i < count && i < PyList_GET_SIZE(received); i++) {
        PyObject *event = PyList_GET_ITEM(received, i);
        if (!PyTuple_Check(event) || PyTuple_GET_SIZE(event) < 1) {
            PyErr_SetString(PyExc_TypeError, "keep_rows: events are tuples (events.py)");
            goto error;
        }
        Py_INCREF(event);
        PyObject *kind = PyObject_GetAttr(event, str_kind);
        PyObject *row = NULL;
        int is_node = kind == NULL ? -1 : same_kind(kind, kind_node_created);
        if (is_node < 0) {
            goto event_error;
        }
        Py_ssize_t size = PyTuple_GET_SIZE(event);
        if (is_node) {
            PyObject *id = PyTuple_GET_ITEM(event, 0);
            int known = PySet_Contains(node_ids, id);
            if (known < 0) {
                goto event_error;
            }
            if (known) {
                goto next;
            }
            if (node_room <= 0) {
                dropped_nodes++;
                goto next;
            }
            node_room--;
            if (PySet_Add(node_ids, id) < 0) {
                goto event_error;
            }
            PyObject *where = where_index < size ? PyTuple_GET_ITEM(event, where_index) : Py_None;
            if (where != Py_None) {
                PyObject *shared = PyDict_GetItemWithError(wheres, where); /* borrowed */
                if (shared != NULL) {
                    Py_INCREF(shared);
                } else {
                    if (PyErr_Occurred()) {
                        goto event_error;
                    }
                    shared = PyObject_CallOneArg(share, where);
                    if (shared == NULL || PyDict_SetItem(wheres, where, shared) < 0) {
                        Py_XDECREF(shared);
                        goto event_error;
                    }
                }
                row = PyTuple_New(size);
                if (row == NULL) {
                    Py_DECREF(shared);
                    goto event_error;
                }
                for (Py_ssize_t k = 0; k < size; k++) {
                    PyTuple_SET_ITEM(row, k, k == where_index
                                                 ? shared
                                                 : Py_NewRef(PyTuple_GET_ITEM(event, k)));
                }
            }
        } else {
            int by_id = same_kind(kind, kind_grad_computed);
            if (by_id == 0) {
                by_id = same_kind(kind, kind_version_bumped);
            }
            if (by_id < 0) {
                goto event_error;
            }
            if (by_id) {
                int known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 0));
                if (known < 0) {
                    goto event_error;
                }
                if (!known) {
                    goto next;
                }
            } else {
                int is_edge = same_kind(kind, kind_edge_grad);
                if (is_edge < 0) {
                    goto event_error;
                }
                if (is_edge && size >= 2) {
                    int known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 0));
                    if (known > 0) {
                        known = PySet_Contains(node_ids, PyTuple_GET_ITEM(event, 1));
                    }
                    if (known < 0) {
                        goto event_error;
                    }
                    if (!known) {
                        goto next;
                    }
                }
            }
        }
        if (room <= 0) {
            dropped_events++;
            Py_XDECREF(row);
            goto next;
        }
        room--;
        if (row == NULL) {
            row = PyTuple_GetSlice(event, 0, size); /* a plain tuple of the same items */
            if (row == NULL) {
                goto event_error;
            }
        }
        PyObject *pair = PyTuple_Pack(2, kind, row);
        Py_DECREF(row);
        if (pair == NULL || PyList_Append(kept, pair) < 0) {
            Py_XDECREF(pair);
            goto event_error;
        }
        Py_DECREF(pair);
    next:
        Py_XDECREF(kind);
        Py_DECREF(event);
        continue;
    event_error:
        Py_XDECREF(kind);
        Py_DECREF(event);
        goto error;
    }
    return Py_BuildValue("Nnnnn", kept, node_room, room, dropped_nodes, dropped_events);
error:
    Py_DECREF(kept);
    return NULL;
}

static PyObject *configure_emit(PyObject *module, PyObject *args)
{
    PyObject *globals, *drop_function, *edge_grad, *grad_computed, *node_created;
    if (!PyArg_ParseTuple(args, "O!OO!O!O!", &PyDict_Type, &globals, &drop_function,
                          &PyType_Type, &edge_grad, &PyType_Type, &grad_computed, &PyType_Type,
                          &node_created)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)edge_grad, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)grad_computed, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)node_created, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure_emit: the event classes must be tuples");
        return NULL;
    }
    Py_XSETREF(edge_grad_type, Py_NewRef(edge_grad));
    Py_XSETREF(grad_computed_type, Py_NewRef(grad_computed));
    Py_XSETREF(node_created_type, Py_NewRef(node_created));
    if (str_shape == NULL) {
        str_shape = PyUnicode_InternFromString("shape");
        str_dtype = PyUnicode_InternFromString("dtype");
        str_cpu = PyUnicode_InternFromString("cpu");
        name_dtype_names = PyUnicode_InternFromString("_dtype_names");
        name_dtype_name = PyUnicode_InternFromString("dtype_name");
        name_recomputing = PyUnicode_InternFromString("recomputing");
        name_backend = PyUnicode_InternFromString("backend");
        if (str_shape == NULL || str_dtype == NULL || str_cpu == NULL ||
            name_dtype_names == NULL || name_dtype_name == NULL ||
            name_recomputing == NULL || name_backend == NULL) {
            return NULL;
        }
    }
    if (name_active == NULL) {
        name_active = PyUnicode_InternFromString("active");
        name_dispatching = PyUnicode_InternFromString("_dispatching");
        name_dispatch_order = PyUnicode_InternFromString("_dispatch_order");
        if (name_active == NULL || name_dispatching == NULL || name_dispatch_order == NULL) {
            return NULL;
        }
    }
    Py_XSETREF(events_globals, Py_NewRef(globals));
    Py_XSETREF(drop, Py_NewRef(drop_function));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------- set-up */

static PyObject *configure(PyObject *module, PyObject *args)
{
    PyObject *objects[10];
    if (!PyArg_ParseTuple(args, "OOOO!O!UOO!OO", &objects[0], &objects[1], &objects[2],
                          &PyDict_Type, &objects[3], &PyDict_Type, &objects[4], &objects[5],
                          &objects[6], &PyDict_Type, &objects[7], &objects[8], &objects[9])) {
        return NULL;
    }
    PyObject **slots[10] = {&py_preview, &py_preview_and_norm, &new_where, &is_internal_file,
                            &where_cache, &package_dir, &getframe, &hands_back_cache,
                            &hands_back, &unnamed};
    for (int i = 0; i < 10; i++) {
        Py_XSETREF(*slots[i], Py_NewRef(objects[i]));
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"preview", preview, METH_O, "events.preview, in C."},
    {"preview_and_norm", preview_and_norm, METH_O, "events.preview_and_norm, in C."},
    {"where_from_stack", (PyCFunction)(void (*)(void))where_from_stack, METH_FASTCALL,
     "events.where_from_stack, in C."},
    {"emit", emit, METH_O, "events.emit, in C."},
    {"emit_edge_grad", (PyCFunction)(void (*)(void))emit_edge_grad, METH_FASTCALL,
     "events.emit_edge_grad, in C."},
    {"emit_grad_computed", (PyCFunction)(void (*)(void))emit_grad_computed, METH_FASTCALL,
     "events.emit_grad_computed, in C."},
    {"emit_op_created", (PyCFunction)(void (*)(void))emit_op_created, METH_FASTCALL,
     "events.emit_op_created, in C."},
    {"keep_rows", (PyCFunction)(void (*)(void))keep_rows, METH_FASTCALL,
     "dyngraph.jupyter.view.keep_rows, in C."},
    {"configure_emit", configure_emit, METH_VARARGS,
     "configure_emit(events_globals, drop, EdgeGrad, GradComputed, NodeCreated): the spine's "
     "module dict, events._drop and the event classes the emit_* functions make."},
    {"configure", configure, METH_VARARGS,
     "configure(preview, preview_and_norm, new_where, is_internal_file, where_cache, "
     "package_dir, getframe, hands_back_cache, hands_back, unnamed): the Python definitions "
     "and caches (events.py calls it once)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "dyngraph._speedups",
    "The event spine's per-event helpers in C (the definitions are in dyngraph/events.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    import_array();
    if (PyType_Ready(&CollectorType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Collector", (PyObject *)&CollectorType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
