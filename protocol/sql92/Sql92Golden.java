// Evaluates SQL92 selector cases with the real org.apache.rocketmq.filter classes (see capture.sh).
// Input: a JSON array of {"expr": string, "props": {name: value}}; output: the same array with "java" added:
// TRUE | FALSE | NULL (what BooleanExpression.evaluate returned), THROW (it threw; the broker drops the message)
// or PARSE_ERROR (SqlFilter.compile failed), plus "error" with the exception text for the last two.
import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.filter.SqlFilter;
import org.apache.rocketmq.filter.expression.BooleanExpression;
import org.apache.rocketmq.filter.expression.EvaluationContext;
import org.apache.rocketmq.filter.expression.Expression;

public class Sql92Golden {
    public static void main(String[] args) throws Exception {
        JSONArray cases = JSON.parseArray(new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8));
        SqlFilter filter = new SqlFilter();
        for (int i = 0; i < cases.size(); i++) {
            JSONObject c = cases.getJSONObject(i);
            final Map<String, String> props = new HashMap<>();
            JSONObject p = c.getJSONObject("props");
            if (p != null) {
                for (String k : p.keySet()) {
                    props.put(k, p.getString(k));
                }
            }
            Expression e;
            try {
                e = filter.compile(c.getString("expr"));
            } catch (Throwable t) {
                c.put("java", "PARSE_ERROR");
                c.put("error", String.valueOf(t.getCause() != null ? t.getCause() : t).split("\n")[0]);
                continue;
            }
            EvaluationContext ctx = new EvaluationContext() {
                public Object get(String name) {
                    return props.get(name);
                }

                public Map<String, Object> keyValues() {
                    return new HashMap<String, Object>(props);
                }
            };
            try {
                Object r = ((BooleanExpression) e).evaluate(ctx);
                c.put("java", r == null ? "NULL" : Boolean.TRUE.equals(r) ? "TRUE" : "FALSE");
            } catch (Throwable t) {
                c.put("java", "THROW");
                c.put("error", t.toString().split("\n")[0]);
            }
        }
        System.out.println(JSON.toJSONString(cases, true));
    }
}
