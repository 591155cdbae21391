// Parses each Java file named on the command line with javac's own parser (no type checking:
// a mutant is judged as syntax) and prints, per file, the number of syntax errors, one per
// line. Run with `java JavaParse.java FILE...` (Java 11 or later).

import com.sun.source.util.JavacTask;
import java.io.File;
import java.util.List;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavaParse {
    public static void main(String[] args) throws Exception {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, null)) {
            for (String name : args) {
                DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
                Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromFiles(List.of(new File(name)));
                JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, List.of("-proc:none"), null, units);
                task.parse();
                long errors = diagnostics.getDiagnostics().stream()
                        .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                        .count();
                System.out.println(errors);
            }
        }
    }
}
